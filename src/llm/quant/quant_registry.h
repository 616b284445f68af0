#pragma once
// What the CPU can do with each ggml type: convert rows to and from f32, and
// take dot products against activations. The model's matrix-vector products and
// `nvhcq quantize` look formats up here rather than naming functions.
//
// A dot product row(W) . x runs as:
//   const QuantOps& w = quant_ops(weight_type);
//   const QuantOps& act = quant_ops(w.vec_dot_type);
//   act.from_float(x, x_blocks, n);             // once per activation vector
//   float s = w.vec_dot(w_row, x_blocks, n);    // per weight row

#include <cstddef>
#include <cstdint>

#include "llm/ggml_type.h"
#include "llm/quant/vec_dot.h"

namespace nvhcq::llm {

using ToFloatFn = void (*)(const void* src, float* dst, int64_t n);
using FromFloatFn = void (*)(const float* src, void* dst, int64_t n);

struct QuantOps {
  GgmlType type;
  uint32_t block_elements;  // elements per block (1 for F32/F16/BF16)
  uint32_t block_bytes;
  // Row conversions; n must be a multiple of block_elements (FormatError otherwise).
  ToFloatFn to_float;
  // ggml's reference quantizer (bit-identical output; Q8_0/Q8_1 take an AVX2 path that
  // writes the same bytes); for F16/BF16 the rounding conversion.
  FromFloatFn from_float;
  // Weight-row . activation-row, on the best path this CPU has, and on the
  // scalar reference path; null for the activation-only formats Q8_1 and Q8_K.
  // Unchecked for speed: n must be a multiple of block_elements (see row_fits).
  VecDotFn vec_dot;
  VecDotFn vec_dot_scalar;
  GgmlType vec_dot_type;  // the format vec_dot wants its activations in
  bool vec_dot_is_simd;   // vec_dot is an AVX2 kernel

  uint64_t row_bytes(int64_t n) const {
    return static_cast<uint64_t>(n) / block_elements * block_bytes;
  }
  bool row_fits(int64_t n) const { return n >= 0 && n % block_elements == 0; }
};

// The operations of `type`, or nullptr when nvhcq cannot convert it (IQ formats, integers).
const QuantOps* find_quant_ops(GgmlType type);
// Same, throwing FormatError naming the type when it is unsupported.
const QuantOps& quant_ops(GgmlType type);

// Checked convenience wrappers (FormatError on a partial block or an unsupported type).
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);
void quantize_row(GgmlType type, const float* src, void* dst, int64_t n);

}  // namespace nvhcq::llm
