#pragma once
// The attention key/value cache: for every layer and KV head, the keys and values
// of the positions processed so far, f16 by default (as llama.cpp keeps them) or
// f32 (for exact comparisons in tests).
//
// Layout per layer: K[kv_head][position][head_dim], V likewise, so that one head's
// keys for consecutive positions are contiguous for the attention loops. Memory is
// allocated up front for `capacity` positions but left untouched (not resident)
// until positions are written.

#include <cstdint>
#include <memory>

namespace nvhcq::llm {

enum class KvCacheType { kF16, kF32 };

class KvCache {
 public:
  KvCache(int n_layer, int n_head_kv, int head_dim, int capacity,
          KvCacheType type = KvCacheType::kF16);

  int n_layer() const { return n_layer_; }
  int n_head_kv() const { return n_head_kv_; }
  int head_dim() const { return head_dim_; }
  int capacity() const { return capacity_; }
  KvCacheType type() const { return type_; }
  size_t element_bytes() const { return type_ == KvCacheType::kF16 ? 2 : 4; }
  // Bytes of K and V for all layers at full capacity.
  uint64_t bytes() const { return total_bytes_; }

  // Positions [0, size()) hold valid entries.
  int size() const { return size_; }
  // Drops positions from `n` on (n <= size()), e.g. to re-run a suffix.
  void truncate(int n);
  void clear() { size_ = 0; }
  // Marks positions up to `n` valid (the model calls this after writing them).
  void set_size(int n);

  // Writes position `pos` of `layer`: k and v hold n_head_kv * head_dim floats.
  void store(int layer, int pos, const float* k, const float* v);

  // Raw rows: head `h` of `layer`, position 0; positions follow each other every
  // head_dim elements (uint16_t f16 bits or float, by type()).
  const void* k_head(int layer, int h) const { return at(k_, layer, h, 0); }
  const void* v_head(int layer, int h) const { return at(v_, layer, h, 0); }

 private:
  uint8_t* at(const std::unique_ptr<uint8_t[]>& base, int layer, int h, int pos) const;

  int n_layer_, n_head_kv_, head_dim_, capacity_;
  KvCacheType type_;
  int size_ = 0;
  uint64_t total_bytes_ = 0;
  std::unique_ptr<uint8_t[]> k_, v_;
};

}  // namespace nvhcq::llm
