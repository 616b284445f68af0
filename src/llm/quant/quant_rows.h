#pragma once
// Dequantize and reference-quantize one row of each ggml block format.
//
// quantize_row_* reproduce ggml's quantize_row_*_ref bit for bit (what
// llama-quantize writes when no importance matrix is given), including the
// scale searches of the K formats (kquant_search.h). dequantize_row_* compute
// exactly ggml's values. `n` is the number of elements; it must be a multiple of
// the block size (32, or 256 for the K formats), else FormatError is thrown.

#include <cstdint>

#include "llm/quant/blocks.h"

namespace nvhcq::llm {

void dequantize_row_q4_0(const BlockQ4_0* src, float* dst, int64_t n);
void dequantize_row_q4_1(const BlockQ4_1* src, float* dst, int64_t n);
void dequantize_row_q5_0(const BlockQ5_0* src, float* dst, int64_t n);
void dequantize_row_q5_1(const BlockQ5_1* src, float* dst, int64_t n);
void dequantize_row_q8_0(const BlockQ8_0* src, float* dst, int64_t n);
void dequantize_row_q8_1(const BlockQ8_1* src, float* dst, int64_t n);
void dequantize_row_q2_k(const BlockQ2_K* src, float* dst, int64_t n);
void dequantize_row_q3_k(const BlockQ3_K* src, float* dst, int64_t n);
void dequantize_row_q4_k(const BlockQ4_K* src, float* dst, int64_t n);
void dequantize_row_q5_k(const BlockQ5_K* src, float* dst, int64_t n);
void dequantize_row_q6_k(const BlockQ6_K* src, float* dst, int64_t n);
void dequantize_row_q8_k(const BlockQ8_K* src, float* dst, int64_t n);

void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n);
void quantize_row_q4_1(const float* src, BlockQ4_1* dst, int64_t n);
void quantize_row_q5_0(const float* src, BlockQ5_0* dst, int64_t n);
void quantize_row_q5_1(const float* src, BlockQ5_1* dst, int64_t n);
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n);
void quantize_row_q8_1(const float* src, BlockQ8_1* dst, int64_t n);
void quantize_row_q2_k(const float* src, BlockQ2_K* dst, int64_t n);
void quantize_row_q3_k(const float* src, BlockQ3_K* dst, int64_t n);
void quantize_row_q4_k(const float* src, BlockQ4_K* dst, int64_t n);
void quantize_row_q5_k(const float* src, BlockQ5_K* dst, int64_t n);
void quantize_row_q6_k(const float* src, BlockQ6_K* dst, int64_t n);
// Q8_K as ggml's reference, except that an all-zero block also gets zero bsums
// (ggml leaves them unwritten).
void quantize_row_q8_k(const float* src, BlockQ8_K* dst, int64_t n);

namespace detail {
// Throws FormatError unless n is a non-negative multiple of `block`.
void check_row_length(int64_t n, int block, const char* format);
}  // namespace detail

}  // namespace nvhcq::llm
