#pragma once
// A repacked matrix's descriptor with a format and shape but no arrays: all
// that llm/gpu's launch plans read of it, for the tests of their choices.

#include "kernels/llm_formats.cuh"

namespace nvhcq::llm::plan_test {

inline LlmGpuMatrix matrix(int format, int rows, int cols) {
  LlmGpuMatrix m{};
  m.format = format;
  m.rows = rows;
  m.cols = cols;
  return m;
}

}  // namespace nvhcq::llm::plan_test
