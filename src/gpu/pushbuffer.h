#pragma once
// Builds a pushbuffer: a stream of 32-bit method headers and data words.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "gpu/hw/methods.h"

namespace nvhcq::gpu {

class PushBuffer {
 public:
  // One increasing-method header followed by its data words.
  PushBuffer& method(uint32_t subch, uint32_t method, std::initializer_list<uint32_t> data);
  PushBuffer& method(uint32_t subch, uint32_t method, const uint32_t* data, uint32_t count);
  // The upper and lower halves of a 64-bit value, as the A/B method pairs want.
  static uint32_t hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
  static uint32_t lo(uint64_t v) { return static_cast<uint32_t>(v); }

  const std::vector<uint32_t>& words() const { return words_; }
  size_t size_bytes() const { return words_.size() * 4; }
  bool empty() const { return words_.empty(); }
  void clear() { words_.clear(); }
  // Index of the next word, for patching a value in place later.
  size_t position() const { return words_.size(); }
  uint32_t& word(size_t index) { return words_.at(index); }

 private:
  std::vector<uint32_t> words_;
};

}  // namespace nvhcq::gpu
