// Q2_K and Q3_K: reference quantizers matching ggml's bytes, and dequantizers.
// Float operations follow ggml's order, without FMA (see quant_legacy.cpp).
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

// Packs 256 two-bit levels: per half of 128, byte l holds elements l, l + 32,
// l + 64 and l + 96 in bits 0-1, 2-3, 4-5 and 6-7.
template <typename Level>
void pack_2bit(const Level* L, uint8_t* qs) {
  for (int half = 0; half < kQK_K; half += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[half / 4 + l] = static_cast<uint8_t>(L[half + l] | (L[half + l + 32] << 2) |
                                              (L[half + l + 64] << 4) | (L[half + l + 96] << 6));
    }
  }
}

}  // namespace

void quantize_row_q2_k(const float* x, BlockQ2_K* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q2_K");
  constexpr float kScaleLevels = 15.0f;  // scales and mins are 4-bit
  uint8_t L[kQK_K];
  uint8_t Laux[16];
  float weights[16];
  float mins[kQK_K / 16];
  float scales[kQK_K / 16];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float max_scale = 0.0f, max_min = 0.0f;  // both non-negative: mins are subtracted
    for (int j = 0; j < kQK_K / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = detail::make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux,
                                           -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    BlockQ2_K& out = y[b];
    if (max_scale > 0.0f) {
      const float iscale = kScaleLevels / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) {
        out.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      }
      out.d = fp32_to_fp16(max_scale / kScaleLevels);
    } else {
      std::fill(out.scales, out.scales + kQK_K / 16, uint8_t{0});
      out.d = fp32_to_fp16(0.0f);
    }
    if (max_min > 0.0f) {
      const float iscale = kScaleLevels / max_min;
      for (int j = 0; j < kQK_K / 16; ++j) {
        out.scales[j] = static_cast<uint8_t>(out.scales[j] | (nearest_int(iscale * mins[j]) << 4));
      }
      out.dmin = fp32_to_fp16(max_min / kScaleLevels);
    } else {
      out.dmin = fp32_to_fp16(0.0f);
    }
    // Re-derive the levels against the rounded scales actually stored.
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(out.d) * static_cast<float>(out.scales[j] & 0x0f);
      if (d == 0.0f) continue;
      const float dm = fp16_to_fp32(out.dmin) * static_cast<float>(out.scales[j] >> 4);
      for (int i = 0; i < 16; ++i) {
        L[16 * j + i] =
            static_cast<uint8_t>(std::clamp(nearest_int((x[16 * j + i] + dm) / d), 0, 3));
      }
    }
    pack_2bit(L, out.qs);
  }
}

void dequantize_row_q2_k(const BlockQ2_K* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q2_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    const float dmin = fp16_to_fp32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    int is = 0;
    for (int half = 0; half < kQK_K; half += 128, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {  // two sub-blocks of 16 per shift
          const uint8_t sc = x[b].scales[is++];
          const float dl = d * static_cast<float>(sc & 0x0f);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) {
            *y++ = dl * static_cast<float>((q[16 * part + l] >> shift) & 3) - ml;
          }
        }
      }
    }
  }
}

void quantize_row_q3_k(const float* x, BlockQ3_K* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q3_K");
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float max_scale = 0.0f, amax = 0.0f;  // the signed scale of largest magnitude
    for (int j = 0; j < kQK_K / 16; ++j) {
      scales[j] = detail::make_q3_quants(16, 4, x + 16 * j, L + 16 * j, true);
      const float a = std::fabs(scales[j]);
      if (a > amax) {
        amax = a;
        max_scale = scales[j];
      }
    }
    BlockQ3_K& out = y[b];
    std::memset(out.scales, 0, sizeof(out.scales));
    if (max_scale != 0.0f) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) {
        int8_t l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
        l = static_cast<int8_t>(std::clamp<int>(l, -32, 31) + 32);
        if (j < 8) {
          out.scales[j] = static_cast<uint8_t>(l & 0x0f);
        } else {
          out.scales[j - 8] = static_cast<uint8_t>(out.scales[j - 8] | ((l & 0x0f) << 4));
        }
        l = static_cast<int8_t>(l >> 4);
        out.scales[j % 4 + 8] = static_cast<uint8_t>(out.scales[j % 4 + 8] | (l << (2 * (j / 4))));
      }
      out.d = fp32_to_fp16(1.0f / iscale);
    } else {
      out.d = fp32_to_fp16(0.0f);
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = fp16_to_fp32(out.d) * static_cast<float>(detail::q3k_scale(j, out.scales));
      if (d == 0.0f) continue;
      for (int i = 0; i < 16; ++i) {
        L[16 * j + i] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + i] / d), -4, 3) + 4);
      }
    }
    // The high bit of element e goes to bit e / 32 of hmask[e % 32].
    std::memset(out.hmask, 0, sizeof(out.hmask));
    for (int e = 0; e < kQK_K; ++e) {
      if (L[e] > 3) {
        out.hmask[e % 32] = static_cast<uint8_t>(out.hmask[e % 32] | (1 << (e / 32)));
        L[e] = static_cast<int8_t>(L[e] - 4);
      }
    }
    pack_2bit(L, out.qs);
  }
}

void dequantize_row_q3_k(const BlockQ3_K* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK_K, "q3_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d_all = fp16_to_fp32(x[b].d);
    const uint8_t* q = x[b].qs;
    const uint8_t* hm = x[b].hmask;
    uint8_t m = 1;
    int is = 0;
    for (int half = 0; half < kQK_K; half += 128, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d_all * static_cast<float>(detail::q3k_scale(is++, x[b].scales));
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            const int level = ((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4);
            *y++ = dl * static_cast<float>(level);
          }
        }
      }
    }
  }
}

}  // namespace nvhcq::llm
