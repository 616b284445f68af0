#pragma once
// The small float kernels of the forward pass that are not weight products:
// dot products and scaled adds against f32 or f16 rows (attention over the KV
// cache), RMSNorm, SiLU. AVX2/FMA/F16C when the build targets them (the default
// x86-64-v3 build does), plain loops otherwise.

#include <cmath>
#include <cstdint>

#include "kernels/llm_formats.cuh"
#include "llm/quant/half.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define NVHCQ_MODEL_AVX2 1
#else
#define NVHCQ_MODEL_AVX2 0
#endif

namespace nvhcq::llm::vec {

#if NVHCQ_MODEL_AVX2
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline __m256 load_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
#endif

inline float dot(const float* a, const float* b, int n) {
  int i = 0;
  float sum = 0.0f;
#if NVHCQ_MODEL_AVX2
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  sum = hsum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

inline float dot(const float* a, const uint16_t* b, int n) {
  int i = 0;
  float sum = 0.0f;
#if NVHCQ_MODEL_AVX2
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_f16(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), load_f16(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_f16(b + i), acc0);
  sum = hsum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) sum += a[i] * fp16_to_fp32(b[i]);
  return sum;
}

// y += a * x
inline void axpy(float* y, float a, const float* x, int n) {
  int i = 0;
#if NVHCQ_MODEL_AVX2
  const __m256 va = _mm256_set1_ps(a);
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
#endif
  for (; i < n; ++i) y[i] += a * x[i];
}

inline void axpy(float* y, float a, const uint16_t* x, int n) {
  int i = 0;
#if NVHCQ_MODEL_AVX2
  const __m256 va = _mm256_set1_ps(a);
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, load_f16(x + i), _mm256_loadu_ps(y + i)));
  }
#endif
  for (; i < n; ++i) y[i] += a * fp16_to_fp32(x[i]);
}

// out = x / sqrt(mean(x^2) + eps) * weight. The sum of squares is taken in double:
// it costs nothing next to the matrix products and keeps wide rows exact. The
// scale is the GPU kernels' (llm_rms_scale), so both paths round alike.
inline void rms_norm(const float* x, const float* weight, float* out, int n, float eps) {
  double ss = 0.0;
  for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = llm_rms_scale(ss, n, eps);
  for (int i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

inline float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

}  // namespace nvhcq::llm::vec
