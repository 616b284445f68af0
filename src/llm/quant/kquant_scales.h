#pragma once
// Unpacking of the packed sub-block scales of the K formats. Internal to llm/quant.

#include <cstdint>

namespace nvhcq::llm::detail {

// Q4_K/Q5_K: 8 six-bit scales and 8 six-bit mins in 12 bytes. Sub-blocks 0-3
// keep both in the low 6 bits of bytes j and j + 4; sub-blocks 4-7 keep their low
// 4 bits in byte j + 4 and their top 2 bits in the top bits of bytes j - 4 and j.
inline void scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q3_K: 16 six-bit scales (stored + 32) in 12 bytes: low nibbles of sub-blocks
// 0-7 in bytes 0-7, of 8-15 in the high nibbles of bytes 0-7, and the top 2 bits
// of sub-block j at bit 2 * (j / 4) of byte 8 + j % 4. Returns the signed scale.
inline int q3k_scale(int j, const uint8_t* q) {
  const int low = j < 8 ? (q[j] & 0x0f) : (q[j - 8] >> 4);
  const int high = (q[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace nvhcq::llm::detail
