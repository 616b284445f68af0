#include "llm/synth/tensor_streamer.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "llm/quant/quant_registry.h"

namespace nvhcq::llm {

TensorStreamer::TensorStreamer(GgufFileWriter& out, cpu::ThreadPool& pool, uint64_t chunk_bytes)
    : out_(out), pool_(pool), chunk_bytes_(std::max<uint64_t>(chunk_bytes, 1)) {}

TensorStreamer::~TensorStreamer() {
  // An exception is unwinding: let the pending write finish, drop its error.
  if (pending_.valid()) {
    try {
      pending_.get();
    } catch (...) {
    }
  }
}

void TensorStreamer::flush() {
  if (pending_.valid()) pending_.get();
}

void TensorStreamer::submit(std::vector<uint8_t>& chunk, size_t n) {
  flush();  // writes stay in order, and the other buffer is free again after this
  const uint8_t* data = chunk.data();
  pending_ = std::async(std::launch::async, [this, data, n] { out_.write({data, n}); });
}

void TensorStreamer::write_rows(const GgufTensorInfo& info, const RowFn& make_row) {
  // (The writer checks the order: it refuses bytes past the end of the current
  // tensor. Its current tensor lags while a chunk is in flight, so it is not asked here.)
  const QuantOps& ops = quant_ops(info.type);
  const int64_t cols = static_cast<int64_t>(info.dims[0]);
  const int64_t rows = static_cast<int64_t>(info.n_elements / info.dims[0]);
  const uint64_t row_bytes = ops.row_bytes(cols);
  const int64_t rows_per_chunk =
      std::max<int64_t>(1, static_cast<int64_t>(chunk_bytes_ / std::max<uint64_t>(row_bytes, 1)));
  for (int64_t r0 = 0; r0 < rows; r0 += rows_per_chunk) {
    const int64_t n = std::min(rows_per_chunk, rows - r0);
    std::vector<uint8_t>& chunk = buffers_[current_];
    current_ ^= 1;
    // The write in flight (if any) is the previous chunk, from the other buffer.
    chunk.resize(static_cast<size_t>(n) * row_bytes);
    uint8_t* dst = chunk.data();
    pool_.parallel_for(0, n, 1, [&](int64_t lo, int64_t hi) {
      thread_local std::vector<float> values;
      values.resize(static_cast<size_t>(cols));
      for (int64_t r = lo; r < hi; ++r) {
        make_row(r0 + r, values.data());
        ops.from_float(values.data(), dst + static_cast<uint64_t>(r) * row_bytes, cols);
      }
    });
    submit(chunk, chunk.size());
  }
}

void TensorStreamer::write_bytes(const GgufTensorInfo& info, std::span<const uint8_t> bytes) {
  flush();
  out_.write_tensor(info.name, bytes);
}

}  // namespace nvhcq::llm
