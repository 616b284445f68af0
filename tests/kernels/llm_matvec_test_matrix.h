#pragma once
// A weight matrix for the matrix-vector kernels' emulator tests: random rows
// in a GGUF type, their GPU repacking (llm/gpu/weight_repack.h) and the CPU's
// dot product of a row with activations quantized as the CPU quantizes them.

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "kernels/llm_formats.cuh"
#include "kernels/llm_jobs.cuh"
#include "llm/gpu/weight_repack.h"
#include "llm/quant/quant_registry.h"

namespace nvhcq::llm {

inline std::vector<float> random_vector(size_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng) * scale;
  return v;
}

struct TestMatrix {
  GgmlType type;
  int rows, cols;
  std::vector<uint8_t> gguf;
  std::vector<uint8_t> arrays[kGpuArrayCount];
  LlmGpuMatrix desc{};

  TestMatrix(GgmlType t, int n_rows, int n_cols, std::mt19937& rng) : type(t), rows(n_rows), cols(n_cols) {
    const QuantOps& ops = quant_ops(type);
    const std::vector<float> values = random_vector(static_cast<size_t>(rows) * cols, 0.05f, rng);
    gguf.resize(ops.row_bytes(cols) * rows);
    for (int r = 0; r < rows; ++r) {
      quantize_row(type, values.data() + static_cast<size_t>(r) * cols, gguf.data() + r * ops.row_bytes(cols),
                   cols);
    }
    const GpuMatrixLayout layout = gpu_matrix_layout(type, rows, cols);
    RepackTarget target;
    for (int a = 0; a < kGpuArrayCount; ++a) {
      arrays[a].assign(layout.array_bytes(static_cast<GpuArray>(a), rows), 0xA5);
      target.array[a] = layout.row_bytes[a] ? arrays[a].data() : nullptr;
    }
    repack_rows(type, layout, gguf.data(), rows, target);
    uint64_t* addr[kGpuArrayCount] = {&desc.qs, &desc.qh, &desc.scales, &desc.super};
    for (int a = 0; a < kGpuArrayCount; ++a) *addr[a] = reinterpret_cast<uint64_t>(arrays[a].data());
    desc.format = layout.format;
    desc.rows = rows;
    desc.cols = cols;
  }

  // The CPU's product of row r with activations x (quantized as the CPU does),
  // and the sum of the magnitudes of its terms (the scale of rounding errors).
  std::pair<double, double> dot(int r, const std::vector<float>& x) const {
    const QuantOps& ops = quant_ops(type);
    const QuantOps& act = quant_ops(ops.vec_dot_type);
    std::vector<uint8_t> xq(act.row_bytes(cols));
    act.from_float(x.data(), xq.data(), cols);
    const uint8_t* row = gguf.data() + r * ops.row_bytes(cols);
    std::vector<float> w(cols);
    ops.to_float(row, w.data(), cols);
    double magnitude = 0.0;
    for (int i = 0; i < cols; ++i) magnitude += std::fabs(static_cast<double>(w[i]) * x[i]);
    return {ops.vec_dot_scalar(row, xq.data(), cols), magnitude};
  }
};

}  // namespace nvhcq::llm
