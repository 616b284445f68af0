#pragma once
// Small AVX2 building blocks shared by the SIMD dot products. Internal to
// llm/quant; include only from files whose callers check quant_avx2_enabled().

#include "llm/quant/simd.h"

#if NVHCQ_QUANT_HAVE_X86
#include <immintrin.h>

#include <cstdint>

namespace nvhcq::llm::avx2 {

NVHCQ_TARGET_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

NVHCQ_TARGET_AVX2 inline float half_to_float(uint16_t h) {
  return _cvtsh_ss(h);
}

NVHCQ_TARGET_AVX2 inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// 16 packed bytes -> 32 nibbles: low nibbles in bytes 0-15, high nibbles in 16-31
// (the element order of the 32-element 4-bit formats). One broadcast load, one
// variable shift (the upper lane by 4) and one mask.
NVHCQ_TARGET_AVX2 inline __m256i unpack_nibbles_32(const uint8_t* qs) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  const __m256i shifted = _mm256_srlv_epi64(both, _mm256_set_epi64x(4, 4, 0, 0));
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0f));
}

// Bit i of `bits` -> byte i of the result: 0xff when set, 0 when clear.
NVHCQ_TARGET_AVX2 inline __m256i spread_bits_32(uint32_t bits) {
  // Byte i takes byte i / 8 of the word, then every bit but bit i % 8 is forced on.
  const __m256i pick = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101,
                                         0x0000000000000000);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)), pick);
  const __m256i others = _mm256_set1_epi64x(static_cast<int64_t>(0x7fbfdfeff7fbfdfeull));
  return _mm256_cmpeq_epi8(_mm256_or_si256(bytes, others), _mm256_set1_epi64x(-1));
}

// Unsigned bytes u (< 128) times signed bytes s, summed in adjacent pairs to 16 int16.
NVHCQ_TARGET_AVX2 inline __m256i madd_u8_i8(__m256i u, __m256i s) {
  return _mm256_maddubs_epi16(u, s);
}

// Signed bytes times signed bytes, summed in groups of 4 to 8 int32. Exact unless
// both bytes of a pair are -128 (our activations never hold -128).
NVHCQ_TARGET_AVX2 inline __m256i dot_i8_i8(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);
  const __m256i sy = _mm256_sign_epi8(y, x);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

// Sum of int16 pairs to int32.
NVHCQ_TARGET_AVX2 inline __m256i pairs_to_i32(__m256i v16) {
  return _mm256_madd_epi16(v16, _mm256_set1_epi16(1));
}

// int16 lanes 0-7 times `lo`, lanes 8-15 times `hi`, summed in pairs to int32:
// applies the scales of two consecutive 16-element sub-blocks.
NVHCQ_TARGET_AVX2 inline __m256i scale_pairs(__m256i v16, int lo, int hi) {
  const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                                          _mm_set1_epi16(static_cast<int16_t>(lo)));
  return _mm256_madd_epi16(v16, scales);
}

}  // namespace nvhcq::llm::avx2
#endif
