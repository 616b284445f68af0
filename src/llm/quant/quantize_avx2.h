#pragma once
// AVX2 versions of the activation quantizers (Q8_0, Q8_1), which run on every
// activation vector of a matrix-vector product. They produce the same bytes as
// the reference quantize_row_q8_0 / quantize_row_q8_1 for every input (blocks
// holding a NaN are handed to the reference). Internal to llm/quant: the
// registry selects them when quant_avx2_enabled().

#include <cstdint>

#include "llm/quant/blocks.h"

namespace nvhcq::llm::quantize_avx2 {

void q8_0(const float* src, BlockQ8_0* dst, int64_t n);
void q8_1(const float* src, BlockQ8_1* dst, int64_t n);

}  // namespace nvhcq::llm::quantize_avx2
