#include "llm/quant/half.h"

#include "llm/quant/simd.h"

#if NVHCQ_QUANT_HAVE_X86
#include <immintrin.h>
#endif

namespace nvhcq::llm {

void fp16_to_fp32_row_scalar(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

void fp32_to_fp16_row_scalar(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

void bf16_to_fp32_row_scalar(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(src[i]);
}

void fp32_to_bf16_row_scalar(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp32_to_bf16(src[i]);
}

#if NVHCQ_QUANT_HAVE_X86
namespace {

NVHCQ_TARGET_AVX2 void fp16_to_fp32_row_avx2(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  fp16_to_fp32_row_scalar(src + i, dst + i, n - i);
}

NVHCQ_TARGET_AVX2 void fp32_to_fp16_row_avx2(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // F16C keeps a NaN's payload; the reference makes every NaN 0x7e00 (with sign).
    const __m256 nan32 = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    if (!_mm256_testz_ps(nan32, nan32)) {
      const __m256i mask32 = _mm256_castps_si256(nan32);
      const __m128i mask16 =
          _mm_packs_epi32(_mm256_castsi256_si128(mask32), _mm256_extracti128_si256(mask32, 1));
      const __m256i sign32 = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 16),
                                              _mm256_set1_epi32(0x8000));
      const __m128i sign16 =
          _mm_packus_epi32(_mm256_castsi256_si128(sign32), _mm256_extracti128_si256(sign32, 1));
      const __m128i canonical = _mm_or_si128(sign16, _mm_set1_epi16(0x7e00));
      h = _mm_blendv_epi8(h, canonical, mask16);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  fp32_to_fp16_row_scalar(src + i, dst + i, n - i);
}

NVHCQ_TARGET_AVX2 void bf16_to_fp32_row_avx2(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(w));
  }
  bf16_to_fp32_row_scalar(src + i, dst + i, n - i);
}

NVHCQ_TARGET_AVX2 void fp32_to_bf16_row_avx2(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i half_minus = _mm256_set1_epi32(0x7fff);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  for (; i + 8 <= n; i += 8) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, abs_mask), inf);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), one);
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(half_minus, odd)), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), quiet);
    const __m256i r = _mm256_blendv_epi8(rounded, nan, is_nan);
    // packus interleaves the two 128-bit lanes; put the 64-bit halves back in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
  fp32_to_bf16_row_scalar(src + i, dst + i, n - i);
}

}  // namespace
#endif

void fp16_to_fp32_row(const uint16_t* src, float* dst, size_t n) {
#if NVHCQ_QUANT_HAVE_X86
  if (quant_avx2_enabled()) return fp16_to_fp32_row_avx2(src, dst, n);
#endif
  fp16_to_fp32_row_scalar(src, dst, n);
}

void fp32_to_fp16_row(const float* src, uint16_t* dst, size_t n) {
#if NVHCQ_QUANT_HAVE_X86
  if (quant_avx2_enabled()) return fp32_to_fp16_row_avx2(src, dst, n);
#endif
  fp32_to_fp16_row_scalar(src, dst, n);
}

void bf16_to_fp32_row(const uint16_t* src, float* dst, size_t n) {
#if NVHCQ_QUANT_HAVE_X86
  if (quant_avx2_enabled()) return bf16_to_fp32_row_avx2(src, dst, n);
#endif
  bf16_to_fp32_row_scalar(src, dst, n);
}

void fp32_to_bf16_row(const float* src, uint16_t* dst, size_t n) {
#if NVHCQ_QUANT_HAVE_X86
  if (quant_avx2_enabled()) return fp32_to_bf16_row_avx2(src, dst, n);
#endif
  fp32_to_bf16_row_scalar(src, dst, n);
}

}  // namespace nvhcq::llm
