#include "llm/model/kv_cache.h"

#include <cstring>
#include <new>
#include <string>

#include "base/error.h"
#include "llm/quant/half.h"

namespace nvhcq::llm {

KvCache::KvCache(int n_layer, int n_head_kv, int head_dim, int capacity, KvCacheType type)
    : n_layer_(n_layer),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      capacity_(capacity),
      type_(type) {
  if (n_layer <= 0 || n_head_kv <= 0 || head_dim <= 0 || capacity <= 0) {
    throw UsageError("KV cache: layers, heads, head size and capacity must be positive");
  }
  const uint64_t half = static_cast<uint64_t>(n_layer) * n_head_kv * head_dim *
                        static_cast<uint64_t>(capacity) * element_bytes();
  total_bytes_ = 2 * half;
  try {
    // new[] without () leaves the pages untouched: only written positions become resident.
    k_.reset(new uint8_t[half]);
    v_.reset(new uint8_t[half]);
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError("KV cache of " + std::to_string(total_bytes_ >> 20) + " MiB for " +
                               std::to_string(capacity) + " positions does not fit in memory",
                           "new", 0, "use a smaller context (--ctx-size)");
  }
}

void KvCache::truncate(int n) {
  if (n < 0 || n > size_) throw UsageError("KV cache: cannot truncate to " + std::to_string(n));
  size_ = n;
}

void KvCache::set_size(int n) {
  if (n < 0 || n > capacity_) throw UsageError("KV cache: size beyond capacity");
  size_ = n;
}

uint8_t* KvCache::at(const std::unique_ptr<uint8_t[]>& base, int layer, int h, int pos) const {
  const uint64_t index =
      ((static_cast<uint64_t>(layer) * n_head_kv_ + h) * capacity_ + pos) * head_dim_;
  return base.get() + index * element_bytes();
}

void KvCache::store(int layer, int pos, const float* k, const float* v) {
  if (pos < 0 || pos >= capacity_) {
    throw UsageError("KV cache: position " + std::to_string(pos) + " is beyond its capacity of " +
                     std::to_string(capacity_));
  }
  for (int h = 0; h < n_head_kv_; ++h) {
    const float* ks = k + static_cast<int64_t>(h) * head_dim_;
    const float* vs = v + static_cast<int64_t>(h) * head_dim_;
    uint8_t* kd = at(k_, layer, h, pos);
    uint8_t* vd = at(v_, layer, h, pos);
    if (type_ == KvCacheType::kF16) {
      fp32_to_fp16_row(ks, reinterpret_cast<uint16_t*>(kd), static_cast<size_t>(head_dim_));
      fp32_to_fp16_row(vs, reinterpret_cast<uint16_t*>(vd), static_cast<size_t>(head_dim_));
    } else {
      std::memcpy(kd, ks, static_cast<size_t>(head_dim_) * sizeof(float));
      std::memcpy(vd, vs, static_cast<size_t>(head_dim_) * sizeof(float));
    }
  }
}

}  // namespace nvhcq::llm
