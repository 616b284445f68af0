#pragma once
// Dot products of one weight row with one activation row, without
// dequantizing the weights: the inner loop of the CPU matrix-vector products.
//
// As in ggml, activations are first quantized to the format the weight format
// pairs with: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1 (its block sums carry
// the min term), Q8_K for the K formats; F16 with F16, BF16 with BF16, F32 with F32.
// The integer parts are exact; only the per-block float scaling rounds.
//
// `n` is the element count (a whole number of blocks; callers go through the
// registry, which checks it). Functions in `vec_dot_avx2` need AVX2, FMA and F16C:
// call them only when quant_avx2_enabled() (simd.h) is true.

#include <cstdint>

namespace nvhcq::llm {

using VecDotFn = float (*)(const void* weights, const void* activations, int64_t n);

namespace vec_dot_scalar {
float q4_0_q8_0(const void* w, const void* a, int64_t n);
float q4_1_q8_1(const void* w, const void* a, int64_t n);
float q5_0_q8_0(const void* w, const void* a, int64_t n);
float q5_1_q8_1(const void* w, const void* a, int64_t n);
float q8_0_q8_0(const void* w, const void* a, int64_t n);
float q2_k_q8_k(const void* w, const void* a, int64_t n);
float q3_k_q8_k(const void* w, const void* a, int64_t n);
float q4_k_q8_k(const void* w, const void* a, int64_t n);
float q5_k_q8_k(const void* w, const void* a, int64_t n);
float q6_k_q8_k(const void* w, const void* a, int64_t n);
// Plain formats accumulate in double.
float f32_f32(const void* w, const void* a, int64_t n);
float f16_f16(const void* w, const void* a, int64_t n);
float bf16_bf16(const void* w, const void* a, int64_t n);
}  // namespace vec_dot_scalar

namespace vec_dot_avx2 {
float q4_0_q8_0(const void* w, const void* a, int64_t n);
float q4_1_q8_1(const void* w, const void* a, int64_t n);
float q5_0_q8_0(const void* w, const void* a, int64_t n);
float q5_1_q8_1(const void* w, const void* a, int64_t n);
float q8_0_q8_0(const void* w, const void* a, int64_t n);
float q2_k_q8_k(const void* w, const void* a, int64_t n);
float q3_k_q8_k(const void* w, const void* a, int64_t n);
float q4_k_q8_k(const void* w, const void* a, int64_t n);
float q5_k_q8_k(const void* w, const void* a, int64_t n);
float q6_k_q8_k(const void* w, const void* a, int64_t n);
float f32_f32(const void* w, const void* a, int64_t n);
float f16_f16(const void* w, const void* a, int64_t n);
float bf16_bf16(const void* w, const void* a, int64_t n);
}  // namespace vec_dot_avx2

}  // namespace nvhcq::llm
