// The 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1): reference
// quantizers that reproduce ggml's byte for byte, and dequantizers.
//
// Bit-exactness needs every float operation in ggml's order and no fused
// multiply-add (ggml's reference quantizer is built without FMA); GCC contracts
// a*b+c into an FMA even in ISO C++ mode, so contraction is switched off for
// this whole file, before any header defines an inline function.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <cfloat>
#include <cmath>
#include <string>

#include "base/error.h"
#include "llm/quant/half.h"
#include "llm/quant/quant_rows.h"
#include "llm/quant/rounding.h"

namespace nvhcq::llm {

namespace detail {
void check_row_length(int64_t n, int block, const char* format) {
  if (n < 0 || n % block != 0) {
    throw FormatError(std::to_string(n) + " elements are not a whole number of " + format +
                      " blocks of " + std::to_string(block));
  }
}
}  // namespace detail

namespace {

using detail::round_to_int8;
using detail::trunc_to_int8;
using detail::trunc_to_uint8;

// The element of largest magnitude, with its sign (the first one on ties).
float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// ggml's MAX(amax, |v|) loop, NaN behaviour included.
float absmax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float a = std::fabs(x[j]);
    amax = amax > a ? amax : a;
  }
  return amax;
}

void min_max(const float* x, int n, float* min_out, float* max_out) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
  *min_out = min;
  *max_out = max;
}

uint8_t clamp_to(int limit, int8_t v) {
  return static_cast<uint8_t>(v < limit ? v : limit);
}

void store_u32_le(uint8_t* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t load_u32_le(const uint8_t* src) {
  return uint32_t{src[0]} | uint32_t{src[1]} << 8 | uint32_t{src[2]} << 16 | uint32_t{src[3]} << 24;
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
  detail::check_row_length(n, kQK4_0, "q4_0");
  for (int64_t b = 0; b < n / kQK4_0; ++b, x += kQK4_0) {
    const float max = signed_absmax(x, kQK4_0);
    const float d = max / -8.0f;  // the extreme value maps to q = 0 (i.e. -8)
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const uint8_t lo = clamp_to(15, trunc_to_int8(x[j] * id + 8.5f));
      const uint8_t hi = clamp_to(15, trunc_to_int8(x[j + kQK4_0 / 2] * id + 8.5f));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n) {
  detail::check_row_length(n, kQK4_1, "q4_1");
  for (int64_t b = 0; b < n / kQK4_1; ++b, x += kQK4_1) {
    float min, max;
    min_max(x, kQK4_1, &min, &max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    y[b].m = fp32_to_fp16(min);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      const uint8_t lo = clamp_to(15, trunc_to_int8((x[j] - min) * id + 0.5f));
      const uint8_t hi = clamp_to(15, trunc_to_int8((x[j + kQK4_1 / 2] - min) * id + 0.5f));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n) {
  detail::check_row_length(n, kQK5_0, "q5_0");
  for (int64_t b = 0; b < n / kQK5_0; ++b, x += kQK5_0) {
    const float max = signed_absmax(x, kQK5_0);
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const uint8_t lo = clamp_to(31, trunc_to_int8(x[j] * id + 16.5f));
      const uint8_t hi = clamp_to(31, trunc_to_int8(x[j + kQK5_0 / 2] * id + 16.5f));
      y[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      qh |= static_cast<uint32_t>((lo & 0x10u) >> 4) << j;
      qh |= static_cast<uint32_t>((hi & 0x10u) >> 4) << (j + kQK5_0 / 2);
    }
    store_u32_le(y[b].qh, qh);
  }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n) {
  detail::check_row_length(n, kQK5_1, "q5_1");
  for (int64_t b = 0; b < n / kQK5_1; ++b, x += kQK5_1) {
    float min, max;
    min_max(x, kQK5_1, &min, &max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    y[b].m = fp32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      const uint8_t lo = trunc_to_uint8((x[j] - min) * id + 0.5f);
      const uint8_t hi = trunc_to_uint8((x[j + kQK5_1 / 2] - min) * id + 0.5f);
      y[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      qh |= static_cast<uint32_t>((lo & 0x10u) >> 4) << j;
      qh |= static_cast<uint32_t>((hi & 0x10u) >> 4) << (j + kQK5_1 / 2);
    }
    store_u32_le(y[b].qh, qh);
  }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  detail::check_row_length(n, kQK8_0, "q8_0");
  for (int64_t b = 0; b < n / kQK8_0; ++b, x += kQK8_0) {
    const float d = absmax(x, kQK8_0) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK8_0; ++j) y[b].qs[j] = round_to_int8(x[j] * id);
  }
}

void quantize_row_q8_1(const float* x, BlockQ8_1* y, int64_t n) {
  detail::check_row_length(n, kQK8_1, "q8_1");
  for (int64_t b = 0; b < n / kQK8_1; ++b, x += kQK8_1) {
    const float d = absmax(x, kQK8_1) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < kQK8_1; ++j) {
      y[b].qs[j] = round_to_int8(x[j] * id);
      sum += y[b].qs[j];
    }
    y[b].s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK4_0, "q4_0");
  for (int64_t b = 0; b < n / kQK4_0; ++b, y += kQK4_0) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      y[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
      y[j + kQK4_0 / 2] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK4_1, "q4_1");
  for (int64_t b = 0; b < n / kQK4_1; ++b, y += kQK4_1) {
    const float d = fp16_to_fp32(x[b].d);
    const float m = fp16_to_fp32(x[b].m);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      y[j] = static_cast<float>(x[b].qs[j] & 0x0f) * d + m;
      y[j + kQK4_1 / 2] = static_cast<float>(x[b].qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK5_0, "q5_0");
  for (int64_t b = 0; b < n / kQK5_0; ++b, y += kQK5_0) {
    const float d = fp16_to_fp32(x[b].d);
    const uint32_t qh = load_u32_le(x[b].qh);
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const int lo = (x[b].qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int hi = (x[b].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      y[j] = static_cast<float>(lo - 16) * d;
      y[j + kQK5_0 / 2] = static_cast<float>(hi - 16) * d;
    }
  }
}

void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK5_1, "q5_1");
  for (int64_t b = 0; b < n / kQK5_1; ++b, y += kQK5_1) {
    const float d = fp16_to_fp32(x[b].d);
    const float m = fp16_to_fp32(x[b].m);
    const uint32_t qh = load_u32_le(x[b].qh);
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      const int lo = (x[b].qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int hi = (x[b].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      y[j] = static_cast<float>(lo) * d + m;
      y[j + kQK5_1 / 2] = static_cast<float>(hi) * d + m;
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK8_0, "q8_0");
  for (int64_t b = 0; b < n / kQK8_0; ++b, y += kQK8_0) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQK8_0; ++j) y[j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

void dequantize_row_q8_1(const BlockQ8_1* x, float* y, int64_t n) {
  detail::check_row_length(n, kQK8_1, "q8_1");
  for (int64_t b = 0; b < n / kQK8_1; ++b, y += kQK8_1) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQK8_1; ++j) y[j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

}  // namespace nvhcq::llm
