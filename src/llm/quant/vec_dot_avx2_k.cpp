// AVX2 dot products of the K formats with Q8_K activations. Per super-block the
// integer sums are exact in int32; the unsigned levels meet the signed
// activations in maddubs (products stay within int16), and offsets such as Q6_K's
// -32 are applied through the activation group sums (bsums), as ggml does.
// Callers check quant_avx2_enabled() first (the registry does).

#include <type_traits>

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

// Q4_K and Q5_K: 8 sub-blocks of 32 with a 6-bit scale and min each, unpacked
// with 32-bit word operations (the layout is in kquant_scales.h).
struct UnpackedK4 {
  __m256i scales;  // sub-block j's scale in int16 lanes j and j + 8
  __m256i mins;    // m_j * (bsums[2j] + bsums[2j + 1]) summed in pairs: 8 int32 to add up
};

NVHCQ_TARGET_AVX2 inline UnpackedK4 unpack_k4(const uint8_t* packed, const int16_t* bsums) {
  uint32_t u[3];
  __builtin_memcpy(u, packed, 12);
  const uint32_t sc_lo = u[0] & 0x3f3f3f3fu;
  const uint32_t sc_hi = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
  const uint32_t m_lo = u[1] & 0x3f3f3f3fu;
  const uint32_t m_hi = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
  const __m128i sc8 = _mm_set_epi32(0, 0, static_cast<int>(sc_hi), static_cast<int>(sc_lo));
  const __m128i m8 = _mm_set_epi32(0, 0, static_cast<int>(m_hi), static_cast<int>(m_lo));
  UnpackedK4 out;
  out.scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc8));
  // Each min applies to two groups of 16 activations: pair it with both bsums.
  const __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
  out.mins = _mm256_madd_epi16(m16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums)));
  return out;
}

// set1_epi16(scale of sub-block j) from UnpackedK4::scales.
template <int j>
NVHCQ_TARGET_AVX2 inline __m256i scale_of(__m256i scales) {
  return _mm256_shuffle_epi8(scales,
                             _mm256_set1_epi16(static_cast<int16_t>((2 * j + 1) << 8 | 2 * j)));
}

// Sub-blocks 2c and 2c + 1 (levels unsigned, < 64) against their activations, scaled.
template <int c>
NVHCQ_TARGET_AVX2 inline __m256i dot_pair(__m256i lo, __m256i hi, const int8_t* act,
                                          __m256i scales) {
  const __m256i p_lo = madd_u8_i8(lo, load256(act + 64 * c));
  const __m256i p_hi = madd_u8_i8(hi, load256(act + 64 * c + 32));
  return _mm256_add_epi32(_mm256_madd_epi16(p_lo, scale_of<2 * c>(scales)),
                          _mm256_madd_epi16(p_hi, scale_of<2 * c + 1>(scales)));
}

// Levels of chunk c (elements 64c .. 64c + 63) of a Q4_K / Q5_K block.
template <int c>
NVHCQ_TARGET_AVX2 inline void levels_q4k(const BlockQ4_K& b, __m256i* lo, __m256i* hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i q4 = load256(b.qs + 32 * c);
  *lo = _mm256_and_si256(q4, low4);
  *hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), low4);
}

template <int c>
NVHCQ_TARGET_AVX2 inline void levels_q5k(const BlockQ5_K& b, __m256i qh, __m256i* lo, __m256i* hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  const __m256i q4 = load256(b.qs + 32 * c);
  // Bit 2c of qh[l] is bit 4 of element 64c + l, bit 2c + 1 that of element 64c + 32 + l.
  const __m256i h0 = c >= 2 ? _mm256_srli_epi16(qh, 2 * c - 4) : _mm256_slli_epi16(qh, 4 - 2 * c);
  const __m256i h1 = c >= 2 ? _mm256_srli_epi16(qh, 2 * c - 3) : _mm256_slli_epi16(qh, 3 - 2 * c);
  *lo = _mm256_or_si256(_mm256_and_si256(q4, low4), _mm256_and_si256(h0, bit4));
  *hi =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), low4), _mm256_and_si256(h1, bit4));
}

template <typename Block, int c>
NVHCQ_TARGET_AVX2 inline __m256i chunk_dot(const Block& b, __m256i qh, const int8_t* act,
                                           __m256i scales) {
  __m256i lo, hi;
  if constexpr (std::is_same_v<Block, BlockQ4_K>) {
    levels_q4k<c>(b, &lo, &hi);
  } else {
    levels_q5k<c>(b, qh, &lo, &hi);
  }
  return dot_pair<c>(lo, hi, act, scales);
}

template <typename Block>
NVHCQ_TARGET_AVX2 float dot_q45_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const UnpackedK4 s = unpack_k4(x[b].scales, y[b].bsums);
    __m256i qh = _mm256_setzero_si256();
    if constexpr (std::is_same_v<Block, BlockQ5_K>) qh = load256(x[b].qh);
    const int8_t* act = y[b].qs;
    // Two independent sums shorten the dependency chain.
    const __m256i sum01 = _mm256_add_epi32(chunk_dot<Block, 0>(x[b], qh, act, s.scales),
                                           chunk_dot<Block, 1>(x[b], qh, act, s.scales));
    const __m256i sum23 = _mm256_add_epi32(chunk_dot<Block, 2>(x[b], qh, act, s.scales),
                                           chunk_dot<Block, 3>(x[b], qh, act, s.scales));
    const float dy = y[b].d;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(x[b].d) * dy),
                          _mm256_cvtepi32_ps(_mm256_add_epi32(sum01, sum23)), acc);
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(x[b].dmin) * dy),
                              _mm256_cvtepi32_ps(s.mins), acc_min);
  }
  return hsum(acc) - hsum(acc_min);
}

}  // namespace

float q4_k_q8_k(const void* w, const void* a, int64_t n) {
  return dot_q45_k<BlockQ4_K>(w, a, n);
}

float q5_k_q8_k(const void* w, const void* a, int64_t n) {
  return dot_q45_k<BlockQ5_K>(w, a, n);
}

namespace {

// Run k (elements 32k .. 32k + 31 of half h) of a Q6_K block, stored as level + 32
// in [0, 63]: its low nibbles come from ql (runs 0/1: low nibbles of the two
// 32-byte rows, runs 2/3: high nibbles), its 2 high bits from bits 2k..2k+1 of qh.
template <int k>
NVHCQ_TARGET_AVX2 inline __m256i q6k_run(__m256i qa, __m256i qb, __m256i qh) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i q = k % 2 == 0 ? qa : qb;
  const __m256i low =
      k < 2 ? _mm256_and_si256(q, low4) : _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
  const __m256i shifted = k < 2    ? _mm256_slli_epi16(qh, 4 - 2 * k)
                          : k == 2 ? qh
                                   : _mm256_srli_epi16(qh, 2);
  return _mm256_or_si256(low, _mm256_and_si256(shifted, _mm256_set1_epi8(0x30)));
}

// int16 lanes 0-7 = scale g, lanes 8-15 = scale g + 1, for g = 2k within a half
// whose 8 scales sit (as int16) in both 128-bit lanes of `scales8`.
template <int k>
NVHCQ_TARGET_AVX2 inline __m256i q6k_scale_pair(__m256i scales8) {
  const int16_t lo = static_cast<int16_t>((4 * k + 1) << 8 | 4 * k);
  const int16_t hi = static_cast<int16_t>((4 * k + 3) << 8 | (4 * k + 2));
  return _mm256_shuffle_epi8(scales8, _mm256_set_m128i(_mm_set1_epi16(hi), _mm_set1_epi16(lo)));
}

template <int k>
NVHCQ_TARGET_AVX2 inline __m256i q6k_run_dot(__m256i qa, __m256i qb, __m256i qh, const int8_t* act,
                                             __m256i scales8) {
  const __m256i p = madd_u8_i8(q6k_run<k>(qa, qb, qh), load256(act + 32 * k));
  return _mm256_madd_epi16(p, q6k_scale_pair<k>(scales8));
}

}  // namespace

NVHCQ_TARGET_AVX2 float q6_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps(), acc_offset = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const __m256i sc16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].scales)));
    // Levels are stored +32: remove 32 * sum over groups of scale * bsum.
    const __m256i offset =
        _mm256_madd_epi16(sc16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].bsums)));
    __m256i isum[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i qa = load256(x[b].ql + 64 * h);
      const __m256i qb = load256(x[b].ql + 64 * h + 32);
      const __m256i qh = load256(x[b].qh + 32 * h);
      const __m256i scales8 = h == 0 ? _mm256_permute2x128_si256(sc16, sc16, 0x00)
                                     : _mm256_permute2x128_si256(sc16, sc16, 0x11);
      const int8_t* act = y[b].qs + 128 * h;
      isum[h] = _mm256_add_epi32(_mm256_add_epi32(q6k_run_dot<0>(qa, qb, qh, act, scales8),
                                                  q6k_run_dot<1>(qa, qb, qh, act, scales8)),
                                 _mm256_add_epi32(q6k_run_dot<2>(qa, qb, qh, act, scales8),
                                                  q6k_run_dot<3>(qa, qb, qh, act, scales8)));
    }
    const __m256 d = _mm256_set1_ps(half_to_float(x[b].d) * y[b].d);
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_add_epi32(isum[0], isum[1])), acc);
    acc_offset = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(offset), acc_offset);
  }
  return hsum(acc) - 32.0f * hsum(acc_offset);
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
