#pragma once
// IEEE binary16 (f16) and bfloat16 (bf16) conversions, bit-exact with ggml's
// reference conversions:
//  - f32 -> f16 rounds to nearest even, overflows to infinity, produces
//    subnormals, and turns every NaN into the quiet NaN 0x7e00 with its sign.
//  - f32 -> bf16 rounds to nearest even; a NaN keeps its top bits and is made quiet.
// The scalar functions are the reference; the *_row functions take F16C/AVX2
// paths when the CPU has them and give the same bits.

#include <bit>
#include <cstddef>
#include <cstdint>

namespace nvhcq::llm {

constexpr float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in f32.
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(mag) | sign);
  }
  if (exp == 31) {
    // Infinity, or a NaN made quiet (as every x86 conversion does).
    const uint32_t quiet = mant != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mant << 13));
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

constexpr uint16_t fp32_to_fp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {
    // Below the smallest normal half (2^-14): adding 0.5 (whose ulp, 2^-24, is the
    // subnormal half's step) makes the FPU round to nearest even for us.
    const float sum = std::bit_cast<float>(abs) + 0.5f;
    return sign | static_cast<uint16_t>(std::bit_cast<uint32_t>(sum) - 0x3f000000u);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to even;
  // a carry out of the mantissa correctly bumps the exponent.
  const uint32_t odd = (abs >> 13) & 1u;
  const uint32_t rounded = abs - 0x38000000u + 0xfffu + odd;
  return sign | static_cast<uint16_t>(rounded >> 13);
}

constexpr float bf16_to_fp32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

constexpr uint16_t fp32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// Row conversions (SIMD when available). n may be any count.
void fp16_to_fp32_row(const uint16_t* src, float* dst, size_t n);
void fp32_to_fp16_row(const float* src, uint16_t* dst, size_t n);
void bf16_to_fp32_row(const uint16_t* src, float* dst, size_t n);
void fp32_to_bf16_row(const float* src, uint16_t* dst, size_t n);

// The same, always on the scalar path (the reference the SIMD paths are tested against).
void fp16_to_fp32_row_scalar(const uint16_t* src, float* dst, size_t n);
void fp32_to_fp16_row_scalar(const float* src, uint16_t* dst, size_t n);
void bf16_to_fp32_row_scalar(const uint16_t* src, float* dst, size_t n);
void fp32_to_bf16_row_scalar(const float* src, uint16_t* dst, size_t n);

}  // namespace nvhcq::llm
