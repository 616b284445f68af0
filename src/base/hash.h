#pragma once
// A 128-bit non-cryptographic content hash (two independent 64-bit FNV-1a lanes
// with different offsets, then mixed): cache keys, not security.

#include <cstdint>
#include <string>
#include <string_view>

namespace nvhcq {

class ContentHash {
 public:
  ContentHash& add(std::string_view bytes);
  ContentHash& add(uint64_t value);
  std::string hex() const;  // 32 hex digits

 private:
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

}  // namespace nvhcq
