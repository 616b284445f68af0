// AVX2 dot products of the 32-element formats and of the plain float formats.
// Callers check quant_avx2_enabled() first (the registry does).

#include "llm/quant/avx2_helpers.h"
#include "llm/quant/blocks.h"
#include "llm/quant/half.h"
#include "llm/quant/vec_dot.h"

namespace nvhcq::llm::vec_dot_avx2 {

#if NVHCQ_QUANT_HAVE_X86
namespace {

using namespace nvhcq::llm::avx2;

uint32_t load_u32_le(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Signed levels of one block and its scale product, per format.
struct Q4_0Traits {
  using W = BlockQ4_0;
  NVHCQ_TARGET_AVX2 static __m256i levels(const W& b) {
    return _mm256_sub_epi8(unpack_nibbles_32(b.qs), _mm256_set1_epi8(8));
  }
};
struct Q5_0Traits {
  using W = BlockQ5_0;
  NVHCQ_TARGET_AVX2 static __m256i levels(const W& b) {
    const __m256i high =
        _mm256_and_si256(spread_bits_32(load_u32_le(b.qh)), _mm256_set1_epi8(0x10));
    return _mm256_sub_epi8(_mm256_or_si256(unpack_nibbles_32(b.qs), high), _mm256_set1_epi8(16));
  }
};
struct Q8_0Traits {
  using W = BlockQ8_0;
  NVHCQ_TARGET_AVX2 static __m256i levels(const W& b) { return load256(b.qs); }
};

template <typename T>
NVHCQ_TARGET_AVX2 inline __m256 accumulate_symmetric(const typename T::W& x, const BlockQ8_0& y,
                                                     __m256 acc) {
  const __m256i isum = dot_i8_i8(T::levels(x), load256(y.qs));
  const __m256 d = _mm256_set1_ps(half_to_float(x.d) * half_to_float(y.d));
  return _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum), acc);
}

// Lane i of the products d_w * d_a of blocks 0-3, the four f16 pairs converted together.
template <typename T>
NVHCQ_TARGET_AVX2 inline __m256 scales4(const typename T::W* x, const BlockQ8_0* y) {
  const __m128i xd =
      _mm_setr_epi16(static_cast<int16_t>(x[0].d), static_cast<int16_t>(x[1].d),
                     static_cast<int16_t>(x[2].d), static_cast<int16_t>(x[3].d), 0, 0, 0, 0);
  const __m128i yd =
      _mm_setr_epi16(static_cast<int16_t>(y[0].d), static_cast<int16_t>(y[1].d),
                     static_cast<int16_t>(y[2].d), static_cast<int16_t>(y[3].d), 0, 0, 0, 0);
  return _mm256_castps128_ps256(_mm_mul_ps(_mm_cvtph_ps(xd), _mm_cvtph_ps(yd)));
}

template <int i>
NVHCQ_TARGET_AVX2 inline __m256 lane(__m256 v) {
  return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(i));
}

template <typename T>
NVHCQ_TARGET_AVX2 inline __m256 block_sum(const typename T::W& x, const BlockQ8_0& y) {
  return _mm256_cvtepi32_ps(dot_i8_i8(T::levels(x), load256(y.qs)));
}

// Symmetric formats with Q8_0 activations: sum over blocks of d_w d_a sum(q_w q_a),
// four blocks per step with their scales converted together, two accumulators.
template <typename T>
NVHCQ_TARGET_AVX2 float dot_symmetric(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const typename T::W*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const int64_t nb = n / kQK8_0;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    const __m256 d = scales4<T>(x + b, y + b);
    acc0 = _mm256_fmadd_ps(lane<0>(d), block_sum<T>(x[b], y[b]), acc0);
    acc1 = _mm256_fmadd_ps(lane<1>(d), block_sum<T>(x[b + 1], y[b + 1]), acc1);
    acc0 = _mm256_fmadd_ps(lane<2>(d), block_sum<T>(x[b + 2], y[b + 2]), acc0);
    acc1 = _mm256_fmadd_ps(lane<3>(d), block_sum<T>(x[b + 3], y[b + 3]), acc1);
  }
  for (; b < nb; ++b) acc0 = accumulate_symmetric<T>(x[b], y[b], acc0);
  return hsum(_mm256_add_ps(acc0, acc1));
}

struct Q4_1Traits {
  using W = BlockQ4_1;
  NVHCQ_TARGET_AVX2 static __m256i levels(const W& b) { return unpack_nibbles_32(b.qs); }
};
struct Q5_1Traits {
  using W = BlockQ5_1;
  NVHCQ_TARGET_AVX2 static __m256i levels(const W& b) {
    const __m256i high =
        _mm256_and_si256(spread_bits_32(load_u32_le(b.qh)), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(unpack_nibbles_32(b.qs), high);
  }
};

// Formats with a min, with Q8_1 activations: d_w d_a sum(q_w q_a) + m_w s_a per block.
template <typename T>
NVHCQ_TARGET_AVX2 float dot_with_min(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const typename T::W*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  const int64_t nb = n / kQK8_1;
  __m256 acc = _mm256_setzero_ps();
  float min_terms = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const __m256i isum = pairs_to_i32(madd_u8_i8(T::levels(x[b]), load256(y[b].qs)));
    const __m256 d = _mm256_set1_ps(half_to_float(x[b].d) * half_to_float(y[b].d));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum), acc);
    min_terms += half_to_float(x[b].m) * half_to_float(y[b].s);
  }
  return hsum(acc) + min_terms;
}

}  // namespace

float q4_0_q8_0(const void* w, const void* a, int64_t n) {
  return dot_symmetric<Q4_0Traits>(w, a, n);
}
float q5_0_q8_0(const void* w, const void* a, int64_t n) {
  return dot_symmetric<Q5_0Traits>(w, a, n);
}
float q8_0_q8_0(const void* w, const void* a, int64_t n) {
  return dot_symmetric<Q8_0Traits>(w, a, n);
}
float q4_1_q8_1(const void* w, const void* a, int64_t n) {
  return dot_with_min<Q4_1Traits>(w, a, n);
}
float q5_1_q8_1(const void* w, const void* a, int64_t n) {
  return dot_with_min<Q5_1Traits>(w, a, n);
}

// The float formats: four independent accumulators of 8 lanes, then the tail.
NVHCQ_TARGET_AVX2 float f32_f32(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      acc[k] =
          _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * k), _mm256_loadu_ps(y + i + 8 * k), acc[k]);
    }
  }
  for (; i + 8 <= n; i += 8)
    acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc[0]);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

namespace {
NVHCQ_TARGET_AVX2 inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
NVHCQ_TARGET_AVX2 inline __m256 load_bf16x8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

template <__m256 (*Load)(const uint16_t*), float (*ToFloat)(uint16_t)>
NVHCQ_TARGET_AVX2 float dot_16bit(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm256_fmadd_ps(Load(x + i + 8 * k), Load(y + i + 8 * k), acc[k]);
    }
  }
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(Load(x + i), Load(y + i), acc[0]);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += ToFloat(x[i]) * ToFloat(y[i]);
  return sum;
}

float bf16_scalar(uint16_t h) {
  return bf16_to_fp32(h);
}
}  // namespace

float f16_f16(const void* w, const void* a, int64_t n) {
  return dot_16bit<load_f16x8, half_to_float>(w, a, n);
}
float bf16_bf16(const void* w, const void* a, int64_t n) {
  return dot_16bit<load_bf16x8, bf16_scalar>(w, a, n);
}

#else  // no x86: the registry never selects these; keep them correct anyway.

float q4_0_q8_0(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q4_0_q8_0(w, a, n);
}
float q5_0_q8_0(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q5_0_q8_0(w, a, n);
}
float q8_0_q8_0(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q8_0_q8_0(w, a, n);
}
float q4_1_q8_1(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q4_1_q8_1(w, a, n);
}
float q5_1_q8_1(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::q5_1_q8_1(w, a, n);
}
float f32_f32(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::f32_f32(w, a, n);
}
float f16_f16(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::f16_f16(w, a, n);
}
float bf16_bf16(const void* w, const void* a, int64_t n) {
  return vec_dot_scalar::bf16_bf16(w, a, n);
}

#endif

}  // namespace nvhcq::llm::vec_dot_avx2
