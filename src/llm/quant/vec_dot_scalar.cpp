// Scalar dot products: the reference the SIMD versions are tested against, and
// the path taken on CPUs without AVX2. Each block's integer dot product is exact;
// it is scaled by the block's float factors and summed in float, as ggml does.

#include "llm/quant/blocks.h"
#include "llm/quant/half.h"
#include "llm/quant/kquant_scales.h"
#include "llm/quant/vec_dot.h"

namespace nvhcq::llm::vec_dot_scalar {
namespace {

uint32_t load_u32_le(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Sum of x[i] * y[i] over n int values.
template <typename X>
int dot_i8(const X* x, const int8_t* y, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<int>(x[i]) * y[i];
  return sum;
}

// Unpacks a 32-element 4/5-bit block into its levels (before any offset).
template <typename Block>
void nibbles(const Block& b, uint32_t qh, int* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = (b.qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
    q[j + 16] = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
  }
}

// Levels of a whole K super-block, in element order, as small signed integers.
void levels_q2_k(const BlockQ2_K& b, int8_t* q) {
  for (int e = 0; e < kQK_K; ++e) {
    q[e] = static_cast<int8_t>((b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
  }
}

void levels_q3_k(const BlockQ3_K& b, int8_t* q) {
  for (int e = 0; e < kQK_K; ++e) {
    const int low = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    const bool high = (b.hmask[e % 32] >> (e / 32)) & 1;
    q[e] = static_cast<int8_t>(low - (high ? 0 : 4));
  }
}

void levels_q4_k(const BlockQ4_K& b, int8_t* q) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = static_cast<int8_t>(b.qs[32 * c + l] & 0x0f);
      q[64 * c + 32 + l] = static_cast<int8_t>(b.qs[32 * c + l] >> 4);
    }
  }
}

void levels_q5_k(const BlockQ5_K& b, int8_t* q) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int h0 = (b.qh[l] >> (2 * c)) & 1, h1 = (b.qh[l] >> (2 * c + 1)) & 1;
      q[64 * c + l] = static_cast<int8_t>((b.qs[32 * c + l] & 0x0f) | (h0 << 4));
      q[64 * c + 32 + l] = static_cast<int8_t>((b.qs[32 * c + l] >> 4) | (h1 << 4));
    }
  }
}

void levels_q6_k(const BlockQ6_K& b, int8_t* q) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    int8_t* out = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      out[l] = static_cast<int8_t>(((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32);
      out[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
      out[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      out[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
  }
}

}  // namespace

float q4_0_q8_0(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    int q[32];
    nibbles(x[b], 0, q);
    for (int& v : q) v -= 8;
    const int isum = dot_i8(q, y[b].qs, 32);
    sum += static_cast<float>(isum) * (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d));
  }
  return sum;
}

float q4_1_q8_1(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    int q[32];
    nibbles(x[b], 0, q);
    const int isum = dot_i8(q, y[b].qs, 32);
    // sum((d q + m) * dy qy) = d dy sum(q qy) + m * (dy sum(qy)), the last factor being s.
    sum += fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d) * static_cast<float>(isum) +
           fp16_to_fp32(x[b].m) * fp16_to_fp32(y[b].s);
  }
  return sum;
}

float q5_0_q8_0(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    int q[32];
    nibbles(x[b], load_u32_le(x[b].qh), q);
    for (int& v : q) v -= 16;
    const int isum = dot_i8(q, y[b].qs, 32);
    sum += static_cast<float>(isum) * (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d));
  }
  return sum;
}

float q5_1_q8_1(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    int q[32];
    nibbles(x[b], load_u32_le(x[b].qh), q);
    const int isum = dot_i8(q, y[b].qs, 32);
    sum += fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d) * static_cast<float>(isum) +
           fp16_to_fp32(x[b].m) * fp16_to_fp32(y[b].s);
  }
  return sum;
}

float q8_0_q8_0(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    const int isum = dot_i8(x[b].qs, y[b].qs, 32);
    sum += static_cast<float>(isum) * (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d));
  }
  return sum;
}

float q2_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int8_t q[kQK_K];
    levels_q2_k(x[b], q);
    int isum = 0, msum = 0;
    for (int g = 0; g < 16; ++g) {
      isum += (x[b].scales[g] & 0x0f) * dot_i8(q + 16 * g, y[b].qs + 16 * g, 16);
      msum += (x[b].scales[g] >> 4) * y[b].bsums[g];  // the min term needs only the group sums
    }
    sum += y[b].d * fp16_to_fp32(x[b].d) * static_cast<float>(isum) -
           y[b].d * fp16_to_fp32(x[b].dmin) * static_cast<float>(msum);
  }
  return sum;
}

float q3_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int8_t q[kQK_K];
    levels_q3_k(x[b], q);
    int isum = 0;
    for (int g = 0; g < 16; ++g) {
      isum += detail::q3k_scale(g, x[b].scales) * dot_i8(q + 16 * g, y[b].qs + 16 * g, 16);
    }
    sum += fp16_to_fp32(x[b].d) * y[b].d * static_cast<float>(isum);
  }
  return sum;
}

namespace {
// Q4_K and Q5_K differ only in their levels.
template <typename Block>
float dot_q45_k(const Block* x, const BlockQ8_K* y, int64_t n,
                void (*levels)(const Block&, int8_t*)) {
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int8_t q[kQK_K];
    levels(x[b], q);
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      detail::scale_min_k4(j, x[b].scales, &sc, &m);
      isum += sc * dot_i8(q + 32 * j, y[b].qs + 32 * j, 32);
      msum += m * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
    }
    sum += fp16_to_fp32(x[b].d) * y[b].d * static_cast<float>(isum) -
           fp16_to_fp32(x[b].dmin) * y[b].d * static_cast<float>(msum);
  }
  return sum;
}
}  // namespace

float q4_k_q8_k(const void* w, const void* a, int64_t n) {
  return dot_q45_k(static_cast<const BlockQ4_K*>(w), static_cast<const BlockQ8_K*>(a), n,
                   levels_q4_k);
}

float q5_k_q8_k(const void* w, const void* a, int64_t n) {
  return dot_q45_k(static_cast<const BlockQ5_K*>(w), static_cast<const BlockQ8_K*>(a), n,
                   levels_q5_k);
}

float q6_k_q8_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int8_t q[kQK_K];
    levels_q6_k(x[b], q);
    int isum = 0;
    for (int g = 0; g < 16; ++g) isum += x[b].scales[g] * dot_i8(q + 16 * g, y[b].qs + 16 * g, 16);
    sum += fp16_to_fp32(x[b].d) * y[b].d * static_cast<float>(isum);
  }
  return sum;
}

float f32_f32(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * y[i];
  return static_cast<float>(sum);
}

float f16_f16(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += static_cast<double>(fp16_to_fp32(x[i])) * fp16_to_fp32(y[i]);
  }
  return static_cast<float>(sum);
}

float bf16_bf16(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += static_cast<double>(bf16_to_fp32(x[i])) * bf16_to_fp32(y[i]);
  }
  return static_cast<float>(sum);
}

}  // namespace nvhcq::llm::vec_dot_scalar
