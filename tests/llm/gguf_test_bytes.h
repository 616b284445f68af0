#pragma once
// Test helpers for GGUF files: a byte builder for hand-made (often broken) files
// and patch helpers for corrupting valid ones at known places.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace nvhcq::llm::testing {

// Appends little-endian GGUF fields, with no checks, so tests can write anything.
class GgufBytes {
 public:
  GgufBytes& raw(std::string_view s) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  GgufBytes& u8(uint8_t v) { return put(v); }
  GgufBytes& u32(uint32_t v) { return put(v); }
  GgufBytes& i32(int32_t v) { return put(v); }
  GgufBytes& u64(uint64_t v) { return put(v); }
  GgufBytes& f32(float v) { return put(v); }
  GgufBytes& str(std::string_view s) {
    u64(s.size());
    return raw(s);
  }
  // "GGUF", version, tensor count, metadata count.
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return raw("GGUF").u32(version).u64(n_tensors).u64(n_kv);
  }
  // A metadata entry holding a u32.
  GgufBytes& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(4).u32(v); }
  GgufBytes& pad_to(size_t alignment) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }

  std::vector<uint8_t> bytes;

 private:
  template <typename T>
  GgufBytes& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
};

// Offset of the first occurrence of `needle` in `hay`, or SIZE_MAX.
inline size_t find_bytes(const std::vector<uint8_t>& hay, std::string_view needle) {
  if (needle.size() > hay.size()) return SIZE_MAX;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    if (std::memcmp(hay.data() + i, needle.data(), needle.size()) == 0) return i;
  }
  return SIZE_MAX;
}

template <typename T>
inline void patch(std::vector<uint8_t>& bytes, size_t offset, T v) {
  std::memcpy(bytes.data() + offset, &v, sizeof(T));
}

template <typename T>
inline T peek(const std::vector<uint8_t>& bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

}  // namespace nvhcq::llm::testing
