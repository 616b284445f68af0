#include "llm/quant/quantize_avx2.h"

#include "llm/quant/avx2_helpers.h"
#include "llm/quant/half.h"
#include "llm/quant/quant_rows.h"

namespace nvhcq::llm::quantize_avx2 {

#if NVHCQ_QUANT_HAVE_X86
namespace {

using namespace nvhcq::llm::avx2;

// One block of 32: the reference's arithmetic lane by lane. Returns false (and
// writes nothing) when the block holds a NaN, whose max the reference takes in
// its own order.
NVHCQ_TARGET_AVX2 bool quantize_block(const float* x, float* d_out, int8_t* qs) {
  __m256 v[4];
  __m256 amax = _mm256_setzero_ps();
  __m256 unordered = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v[k], v[k], _CMP_UNORD_Q));
    amax = _mm256_max_ps(amax, _mm256_and_ps(v[k], abs_mask));
  }
  if (!_mm256_testz_ps(unordered, unordered)) return false;
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float d = _mm_cvtss_f32(m) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *d_out = d;
  const __m256 vid = _mm256_set1_ps(id);
  const __m256i int_min = _mm256_set1_epi32(INT32_MIN);
  const __m256 half = _mm256_set1_ps(0.5f), minus_half = _mm256_set1_ps(-0.5f);
  // Byte 0 of each int32 lane (the C conversion keeps the low byte), per 128-bit half.
  const __m256i low_bytes =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  for (int k = 0; k < 4; ++k) {
    const __m256 s = _mm256_mul_ps(v[k], vid);
    __m256i t = _mm256_cvttps_epi32(s);  // INT32_MIN when out of range, as cvttss2si
    const __m256 frac = _mm256_sub_ps(s, _mm256_cvtepi32_ps(t));
    const __m256i valid = _mm256_xor_si256(_mm256_cmpeq_epi32(t, int_min), _mm256_set1_epi32(-1));
    const __m256i up =
        _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(frac, half, _CMP_GE_OQ)), valid);
    const __m256i down =
        _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(frac, minus_half, _CMP_LE_OQ)), valid);
    t = _mm256_add_epi32(_mm256_sub_epi32(t, up), down);  // masks are -1: subtract to add 1
    const __m256i bytes = _mm256_shuffle_epi8(t, low_bytes);
    const uint32_t lo = static_cast<uint32_t>(_mm256_extract_epi32(bytes, 0));
    const uint32_t hi = static_cast<uint32_t>(_mm256_extract_epi32(bytes, 4));
    const uint64_t eight = uint64_t{lo} | uint64_t{hi} << 32;
    __builtin_memcpy(qs + 8 * k, &eight, 8);
  }
  return true;
}

}  // namespace

NVHCQ_TARGET_AVX2 void q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  detail::check_row_length(n, kQK8_0, "q8_0");
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    float d;
    if (quantize_block(x + b * kQK8_0, &d, y[b].qs)) {
      y[b].d = fp32_to_fp16(d);
    } else {
      quantize_row_q8_0(x + b * kQK8_0, &y[b], kQK8_0);
    }
  }
}

NVHCQ_TARGET_AVX2 void q8_1(const float* x, BlockQ8_1* y, int64_t n) {
  detail::check_row_length(n, kQK8_1, "q8_1");
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    float d;
    if (!quantize_block(x + b * kQK8_1, &d, y[b].qs)) {
      quantize_row_q8_1(x + b * kQK8_1, &y[b], kQK8_1);
      continue;
    }
    // s = d * sum(q), the sum taken over the stored int8 values.
    const __m256i q = load256(y[b].qs);
    const __m256i sums =
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    y[b].d = fp32_to_fp16(d);
    y[b].s = fp32_to_fp16(static_cast<float>(_mm_cvtsi128_si32(s)) * d);
  }
}

#else

void q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  quantize_row_q8_0(x, y, n);
}
void q8_1(const float* x, BlockQ8_1* y, int64_t n) {
  quantize_row_q8_1(x, y, n);
}

#endif

}  // namespace nvhcq::llm::quantize_avx2
