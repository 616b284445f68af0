#pragma once
// Weight-matrix x activation products on the CPU, computed on the weights where
// they lie (the file's mapping) with the quant layer's dot products: activations
// are quantized once per row to the format the weights pair with (Q8_0, Q8_K,
// F16, ...), then every output is one vec_dot of a weight row with an activation
// row. Several matrices that read the same activations (Q/K/V, gate/up) run as
// one parallel job.
//
// Work is split over output rows. Within a chunk, a small block of weight rows is
// held in cache while every token of the batch passes over it, so prompt
// processing reads each weight once per block rather than once per token.

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/thread_pool.h"
#include "llm/model/model_weights.h"

namespace nvhcq::llm {

// A batch of activation rows (f32, row-major) and their quantized copies.
class QuantizedActivations {
 public:
  // Takes `rows` rows of `cols` floats at `x` (kept by pointer: x must stay
  // unchanged while products read it). Forgets earlier quantized copies.
  void reset(const float* x, int64_t rows, int64_t cols);
  // The rows in `type` (a vec_dot_type), quantizing them in parallel on first use.
  const uint8_t* rows_in(GgmlType type, cpu::ThreadPool& pool);
  uint64_t row_bytes(GgmlType type) const { return quant_ops(type).row_bytes(cols_); }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }

 private:
  struct Copy {
    GgmlType type;
    std::vector<uint8_t> data;
    bool valid = false;
  };
  const float* x_ = nullptr;
  int64_t rows_ = 0, cols_ = 0;
  std::vector<Copy> copies_;
};

// One product of a matmul job: out[t * out_stride + r] = w.row(r) . x[t] (+ bias[r]).
struct MatmulTarget {
  const WeightMatrix* w;
  float* out;
  int64_t out_stride;
  const float* bias = nullptr;  // w->rows values, or null
};

// Runs every target against all rows of `x` (whose cols must equal each w->cols).
void matmul(cpu::ThreadPool& pool, QuantizedActivations& x, std::span<const MatmulTarget> targets);

}  // namespace nvhcq::llm
