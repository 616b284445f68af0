// AVX2 dot products of the K formats with Q8_K activations. Per super-block the
// integer sums are exact in int32; the unsigned levels meet the signed
// activations in maddubs (products stay within int16), and offsets such as Q6_K's
// -32 are applied through the activation group sums (bsums), as ggml does.
// Callers check quant_avx2_enabled() first (the registry does).

#include "llm/quant/avx2_helpers.h"
#include "llm/quant/blocks.h"
#include "llm/quant/half.h"
#include "llm/quant/kquant_scales.h"
#include "llm/quant/vec_dot.h"

namespace nvhcq::llm::vec_dot_avx2 {

#if NVHCQ_QUANT_HAVE_X86
namespace {

using namespace nvhcq::llm::avx2;

// Elements 128 h + 32 s + l of Q2_K/Q3_K sit in bits 2s..2s+1 of qs[32 h + l].
NVHCQ_TARGET_AVX2 inline __m256i two_bit_levels(__m256i q2, int shift) {
  return _mm256_and_si256(_mm256_srli_epi16(q2, 2 * shift), _mm256_set1_epi8(3));
}

}  // namespace

NVHCQ_TARGET_AVX2 float q2_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  float min_terms = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const uint8_t* sc = x[b].scales;
    int msum = 0;
    for (int g = 0; g < 16; ++g) msum += (sc[g] >> 4) * y[b].bsums[g];
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q2 = load256(x[b].qs + 32 * h);
      for (int s = 0; s < 4; ++s) {
        const int g = 8 * h + 2 * s;  // the first of the two 16-element sub-blocks
        const __m256i p = madd_u8_i8(two_bit_levels(q2, s), load256(y[b].qs + 16 * g));
        isum = _mm256_add_epi32(isum, scale_pairs(p, sc[g] & 0x0f, sc[g + 1] & 0x0f));
      }
    }
    const float dy = y[b].d;
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(dy * half_to_float(x[b].d)), _mm256_cvtepi32_ps(isum), acc);
    min_terms += dy * half_to_float(x[b].dmin) * static_cast<float>(msum);
  }
  return hsum(acc) - min_terms;
}

NVHCQ_TARGET_AVX2 float q3_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int scales[16];
    int offset = 0;  // levels are stored +4 when the high bit is set: sum(sc * 4 * bsum) to remove
    for (int g = 0; g < 16; ++g) {
      scales[g] = detail::q3k_scale(g, x[b].scales);
      offset += scales[g] * y[b].bsums[g];
    }
    const __m256i hm = load256(x[b].hmask);
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q2 = load256(x[b].qs + 32 * h);
      for (int s = 0; s < 4; ++s) {
        const int k = 4 * h + s;  // element e = 32 k + l has its high bit at bit k of hmask[l]
        const __m256i high =
            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, k), _mm256_set1_epi8(1)), 2);
        const __m256i q = _mm256_or_si256(two_bit_levels(q2, s), high);  // level + 4, in [0, 7]
        const __m256i p = madd_u8_i8(q, load256(y[b].qs + 32 * k));
        isum = _mm256_add_epi32(isum, scale_pairs(p, scales[2 * k], scales[2 * k + 1]));
      }
    }
    isum = _mm256_sub_epi32(isum, _mm256_setr_epi32(4 * offset, 0, 0, 0, 0, 0, 0, 0));
    const __m256 d = _mm256_set1_ps(half_to_float(x[b].d) * y[b].d);
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

namespace {

// Q4_K and Q5_K: 8 sub-blocks of 32 with a 6-bit scale and min each.
struct ScalesMins {
  int sc[8];
  int min_sum;  // sum over sub-blocks of m * (sum of its activations)
};

NVHCQ_TARGET_AVX2 inline ScalesMins unpack_scales_k4(const uint8_t* packed, const BlockQ8_K& y) {
  ScalesMins out{};
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    detail::scale_min_k4(j, packed, &sc, &m);
    out.sc[j] = sc;
    out.min_sum += m * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
  }
  return out;
}

// One sub-block of 32 levels (unsigned, < 64) against its activations, scaled.
NVHCQ_TARGET_AVX2 inline __m256i scaled_dot_32(__m256i levels, const int8_t* act, int scale) {
  const __m256i p = madd_u8_i8(levels, load256(act));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(scale)));
}

}  // namespace

NVHCQ_TARGET_AVX2 float q4_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float min_terms = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const ScalesMins s = unpack_scales_k4(x[b].scales, y[b]);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q4 = load256(x[b].qs + 32 * c);
      const __m256i lo = _mm256_and_si256(q4, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), low4);
      isum = _mm256_add_epi32(isum, scaled_dot_32(lo, y[b].qs + 64 * c, s.sc[2 * c]));
      isum = _mm256_add_epi32(isum, scaled_dot_32(hi, y[b].qs + 64 * c + 32, s.sc[2 * c + 1]));
    }
    const float dy = y[b].d;
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(x[b].d) * dy), _mm256_cvtepi32_ps(isum), acc);
    min_terms += half_to_float(x[b].dmin) * dy * static_cast<float>(s.min_sum);
  }
  return hsum(acc) - min_terms;
}

NVHCQ_TARGET_AVX2 float q5_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  float min_terms = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const ScalesMins s = unpack_scales_k4(x[b].scales, y[b]);
    const __m256i qh = load256(x[b].qh);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q4 = load256(x[b].qs + 32 * c);
      // Bit 2c of qh[l] is bit 4 of element 64c + l, bit 2c + 1 that of element 64c + 32 + l.
      const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4);
      const __m256i h1 =
          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(q4, low4), h0);
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), low4), h1);
      isum = _mm256_add_epi32(isum, scaled_dot_32(lo, y[b].qs + 64 * c, s.sc[2 * c]));
      isum = _mm256_add_epi32(isum, scaled_dot_32(hi, y[b].qs + 64 * c + 32, s.sc[2 * c + 1]));
    }
    const float dy = y[b].d;
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(x[b].d) * dy), _mm256_cvtepi32_ps(isum), acc);
    min_terms += half_to_float(x[b].dmin) * dy * static_cast<float>(s.min_sum);
  }
  return hsum(acc) - min_terms;
}

NVHCQ_TARGET_AVX2 float q6_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i two = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const int8_t* sc = x[b].scales;
    int offset = 0;  // levels are stored +32: sum(sc * 32 * bsum) to remove
    for (int g = 0; g < 16; ++g) offset += sc[g] * y[b].bsums[g];
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i qa = load256(x[b].ql + 64 * h);
      const __m256i qb = load256(x[b].ql + 64 * h + 32);
      const __m256i qh = load256(x[b].qh + 32 * h);
      // Four runs of 32 elements; run k's 2 high bits are bits 2k..2k+1 of qh[l].
      const __m256i lows[4] = {_mm256_and_si256(qa, low4), _mm256_and_si256(qb, low4),
                               _mm256_and_si256(_mm256_srli_epi16(qa, 4), low4),
                               _mm256_and_si256(_mm256_srli_epi16(qb, 4), low4)};
      for (int k = 0; k < 4; ++k) {
        const __m256i high =
            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), two), 4);
        const __m256i q = _mm256_or_si256(lows[k], high);  // level + 32, in [0, 63]
        const int g = 8 * h + 2 * k;
        const __m256i p = madd_u8_i8(q, load256(y[b].qs + 16 * g));
        isum = _mm256_add_epi32(isum, scale_pairs(p, sc[g], sc[g + 1]));
      }
    }
    isum = _mm256_sub_epi32(isum, _mm256_setr_epi32(32 * offset, 0, 0, 0, 0, 0, 0, 0));
    const __m256 d = _mm256_set1_ps(half_to_float(x[b].d) * y[b].d);
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

#else  // no x86: the registry never selects these; keep them correct anyway.

float q2_k_q8_k(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q2_k_q8_k(w, a, n);
}
float q3_k_q8_k(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q3_k_q8_k(w, a, n);
}
float q4_k_q8_k(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q4_k_q8_k(w, a, n);
}
float q5_k_q8_k(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q5_k_q8_k(w, a, n);
}
float q6_k_q8_k(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q6_k_q8_k(w, a, n);
}

#endif

}  // namespace nvhcq::llm::vec_dot_avx2
