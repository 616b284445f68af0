#pragma once
// IEEE binary16 (f16) and bfloat16 (bf16) storage types and their conversions.
// Every narrowing conversion rounds to nearest, ties to even, exactly once: from
// f64 the value is first rounded to f32 "to odd", which makes the final rounding
// to 11 or 8 significant bits correct (no double rounding).

#include <cmath>
#include <cstdint>
#include <cstring>

namespace nvhcq::cpu {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_half(float f) {
  uint32_t x = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf or NaN (NaN stays quiet NaN)
    return static_cast<uint16_t>(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u | ((x >> 13) & 0x3ffu) : 0u));
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 -> inf
  if (x < 0x38800000u) {  // below 2^-14: subnormal in f16, in units of 2^-24
    float units = bits_float(x) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(units)));
  }
  x += 0xfffu + ((x >> 13) & 1u);
  x -= 112u << 23;
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// f64 -> f32 rounded to odd: truncate, then set the last bit when inexact.
inline float double_to_float_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  uint32_t u = float_bits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) u -= 1;  // step toward zero
  return bits_float(u | 1u);
}

inline uint16_t double_to_half(double d) { return float_to_half(double_to_float_odd(d)); }
inline uint16_t double_to_bf16(double d) { return float_to_bf16(double_to_float_odd(d)); }

}  // namespace nvhcq::cpu
