#include "llm/model/quantized_matmul.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace nvhcq::llm {

void QuantizedActivations::reset(const float* x, int64_t rows, int64_t cols) {
  x_ = x;
  rows_ = rows;
  cols_ = cols;
  for (Copy& c : copies_) c.valid = false;
}

const uint8_t* QuantizedActivations::rows_in(GgmlType type, cpu::ThreadPool& pool) {
  if (type == GgmlType::F32) return reinterpret_cast<const uint8_t*>(x_);
  auto it =
      std::find_if(copies_.begin(), copies_.end(), [&](const Copy& c) { return c.type == type; });
  if (it == copies_.end()) {
    copies_.push_back(Copy{type, {}, false});
    it = copies_.end() - 1;
  }
  if (it->valid) return it->data.data();
  const QuantOps& ops = quant_ops(type);
  if (!ops.row_fits(cols_)) {
    throw FormatError("activation rows of " + std::to_string(cols_) + " values are not whole " +
                      std::string(traits(type).name) + " blocks");
  }
  const uint64_t rb = ops.row_bytes(cols_);
  it->data.resize(rb * static_cast<uint64_t>(rows_));
  uint8_t* dst = it->data.data();
  const float* src = x_;
  const int64_t cols = cols_;
  pool.parallel_for(0, rows_, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) ops.from_float(src + r * cols, dst + r * rb, cols);
  });
  it->valid = true;
  return it->data.data();
}

namespace {

struct PreparedTarget {
  const MatmulTarget* target;
  const uint8_t* act;
  uint64_t act_row_bytes;
  int64_t first_row;  // in the job's concatenated row range
};

// Rows of `t` in [lo, hi) (target-local), for every token.
void run_rows(const PreparedTarget& p, int64_t lo, int64_t hi, int64_t n_tokens) {
  const WeightMatrix& w = *p.target->w;
  const VecDotFn dot = w.ops->vec_dot;
  const int64_t cols = w.cols;
  // A block of weight rows small enough to stay in L1/L2 while the tokens pass.
  const int64_t block =
      std::clamp<int64_t>(static_cast<int64_t>(32768 / std::max<uint64_t>(w.row_bytes, 1)), 1, 16);
  float* out = p.target->out;
  const int64_t stride = p.target->out_stride;
  const float* bias = p.target->bias;
  for (int64_t r0 = lo; r0 < hi; r0 += block) {
    const int64_t r1 = std::min(hi, r0 + block);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const uint8_t* a = p.act + static_cast<uint64_t>(t) * p.act_row_bytes;
      float* o = out + t * stride;
      for (int64_t r = r0; r < r1; ++r) {
        o[r] = dot(w.row(r), a, cols) + (bias != nullptr ? bias[r] : 0.0f);
      }
    }
  }
}

}  // namespace

void matmul(cpu::ThreadPool& pool, QuantizedActivations& x, std::span<const MatmulTarget> targets) {
  PreparedTarget prepared[8];
  if (targets.size() > std::size(prepared)) throw UsageError("matmul: too many targets in one job");
  int64_t total = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const WeightMatrix& w = *targets[i].w;
    if (w.cols != x.cols()) {
      throw FormatError("matmul: weight '" + (w.info ? w.info->name : std::string("?")) +
                        "' takes " + std::to_string(w.cols) + " inputs, activations have " +
                        std::to_string(x.cols()));
    }
    const GgmlType at = w.ops->vec_dot_type;
    prepared[i] = PreparedTarget{&targets[i], x.rows_in(at, pool), x.row_bytes(at), total};
    total += w.rows;
  }
  const size_t n_targets = targets.size();
  const int64_t n_tokens = x.rows();
  pool.parallel_for(0, total, 16, [&](int64_t lo, int64_t hi) {
    for (size_t i = 0; i < n_targets; ++i) {
      const PreparedTarget& p = prepared[i];
      const int64_t begin = p.first_row, end = begin + p.target->w->rows;
      const int64_t a = std::max(lo, begin), b = std::min(hi, end);
      if (a < b) run_rows(p, a - begin, b - begin, n_tokens);
    }
  });
}

}  // namespace nvhcq::llm
