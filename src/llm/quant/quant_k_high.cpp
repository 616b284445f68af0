// Q4_K, Q5_K, Q6_K and Q8_K: reference quantizers matching ggml's bytes, and
// dequantizers. Float operations follow ggml's order, without FMA (see quant_legacy.cpp).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "llm/quant/half.h"
#include "llm/quant/kquant_scales.h"
#include "llm/quant/kquant_search.h"
#include "llm/quant/quant_rows.h"
#include "llm/quant/rounding.h"

namespace nvhcq::llm {
namespace {

using detail::nearest_int;

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): fits each sub-block of 32 with an
// asymmetric scale and min, quantizes those to 6 bits against the block's d and
// dmin, then re-derives the levels L against the stored values.
template <typename Block>
void quantize_scales_and_levels_k(const float* x, Block& out, int nmax, float rmin, int nstep,
                                  uint8_t* L) {
  uint8_t Laux[32];
  float weights[32];
  float mins[kQK_K / 32];
  float scales[kQK_K / 32];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kQK_K / 32; ++j) {
    // Weights favour large values, with the sub-block's rms as a floor.
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = detail::make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux,
                                         rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    ls = std::min<uint8_t>(63, ls);
    lm = std::min<uint8_t>(63, lm);
    if (j < 4) {
      out.scales[j] = ls;
      out.scales[j + 4] = lm;
    } else {
      out.scales[j + 4] = static_cast<uint8_t>((ls & 0x0f) | ((lm & 0x0f) << 4));
      out.scales[j - 4] = static_cast<uint8_t>(out.scales[j - 4] | ((ls >> 4) << 6));
      out.scales[j] = static_cast<uint8_t>(out.scales[j] | ((lm >> 4) << 6));
    }
  }
  out.d = fp32_to_fp16(max_scale / 63.0f);
  out.dmin = fp32_to_fp16(max_min / 63.0f);
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t sc, m;
    detail::scale_min_k4(j, out.scales, &sc, &m);
    const float d = fp16_to_fp32(out.d) * static_cast<float>(sc);
    if (d == 0.0f) continue;
    const float dm = fp16_to_fp32(out.dmin) * static_cast<float>(m);
    for (int i = 0; i < 32; ++i) {
      L[32 * j + i] =
          static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + i] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q4_K");
  uint8_t L[kQK_K];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    quantize_scales_and_levels_k(x, y[b], 15, -1.0f, 20, L);
    uint8_t* q = y[b].qs;
    for (int c = 0; c < kQK_K; c += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[c + l] | (L[c + l + 32] << 4));
    }
  }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q5_K");
  uint8_t L[kQK_K];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    quantize_scales_and_levels_k(x, y[b], 31, -0.5f, 15, L);
    uint8_t* qh = y[b].qh;
    uint8_t* ql = y[b].qs;
    std::memset(qh, 0, kQK_K / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int c = 0; c < kQK_K; c += 64, ql += 32) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[c + j];
        if (l1 > 15) {
          l1 -= 16;
          qh[j] = static_cast<uint8_t>(qh[j] | m1);
        }
        int l2 = L[c + j + 32];
        if (l2 > 15) {
          l2 -= 16;
          qh[j] = static_cast<uint8_t>(qh[j] | m2);
        }
        ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
    }
  }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q6_K");
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float max_scale = 0.0f, max_abs_scale = 0.0f;
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      scales[ib] = detail::make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1);
      const float a = std::fabs(scales[ib]);
      if (a > max_abs_scale) {
        max_abs_scale = a;
        max_scale = scales[ib];
      }
    }
    BlockQ6_K& out = y[b];
    if (max_abs_scale < 1e-15f) {  // an all-zero block
      std::memset(&out, 0, sizeof(out));
      continue;
    }
    const float iscale = -128.0f / max_scale;
    out.d = fp32_to_fp16(1.0f / iscale);
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      out.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(out.d) * static_cast<float>(out.scales[j]);
      if (d == 0.0f) continue;
      for (int i = 0; i < 16; ++i) {
        L[16 * j + i] =
            static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + i] / d), -32, 31) + 32);
      }
    }
    // Per half of 128: ql[l] holds elements l (low nibble) and l + 64 (high),
    // ql[l + 32] elements l + 32 and l + 96; qh[l] their top 2 bits, 2 bits each.
    uint8_t* ql = out.ql;
    uint8_t* qh = out.qh;
    for (int h = 0; h < kQK_K; h += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const int a = L[h + l], bq = L[h + l + 32], c = L[h + l + 64], d = L[h + l + 96];
        ql[l] = static_cast<uint8_t>((a & 0x0f) | ((c & 0x0f) << 4));
        ql[l + 32] = static_cast<uint8_t>((bq & 0x0f) | ((d & 0x0f) << 4));
        qh[l] =
            static_cast<uint8_t>((a >> 4) | ((bq >> 4) << 2) | ((c >> 4) << 4) | ((d >> 4) << 6));
      }
    }
  }
}

void quantize_row_q8_k(const float* x, BlockQ8_K* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q8_K");
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float max = 0.0f, amax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    BlockQ8_K& out = y[b];
    if (amax == 0.0f) {
      std::memset(&out, 0, sizeof(out));
      continue;
    }
    // -127 rather than -128 keeps every value in [-127, 127], as ggml does.
    const float iscale = -127.0f / max;
    for (int j = 0; j < kQK_K; ++j) {
      out.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += out.qs[16 * g + i];
      out.bsums[g] = static_cast<int16_t>(sum);
    }
    out.d = 1.0f / iscale;
  }
}

void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q4_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    const float dmin = fp16_to_fp32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    for (int is = 0; is < 8; is += 2, q += 32) {
      uint8_t sc, m;
      detail::scale_min_k4(is, x[b].scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      detail::scale_min_k4(is + 1, x[b].scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void dequantize_row_q5_k(const BlockQ5_K* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q5_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    const float dmin = fp16_to_fp32(x[b].dmin);
    const uint8_t* ql = x[b].qs;
    const uint8_t* qh = x[b].qh;
    uint8_t u1 = 1, u2 = 2;
    for (int is = 0; is < 8; is += 2, ql += 32) {
      uint8_t sc, m;
      detail::scale_min_k4(is, x[b].scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      detail::scale_min_k4(is + 1, x[b].scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        *y++ = d1 * static_cast<float>((ql[l] & 0x0f) + ((qh[l] & u1) ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
      }
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

void dequantize_row_q6_k(const BlockQ6_K* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q6_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    const uint8_t* ql = x[b].ql;
    const uint8_t* qh = x[b].qh;
    const int8_t* sc = x[b].scales;
    for (int h = 0; h < kQK_K; h += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

void dequantize_row_q8_k(const BlockQ8_K* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q8_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    for (int j = 0; j < kQK_K; ++j) *y++ = x[b].d * static_cast<float>(x[b].qs[j]);
  }
}

}  // namespace nvhcq::llm
