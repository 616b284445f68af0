#pragma once
// Writes the tensors of a GGUF file whose rows are computed (synthesized, or
// dequantized from another file) and converted to the tensor's type in parallel,
// a chunk of rows at a time, while the previous chunk goes to disk on another
// thread. Memory stays at two chunks whatever the model's size.

#include <cstdint>
#include <functional>
#include <future>
#include <span>
#include <vector>

#include "cpu/thread_pool.h"
#include "llm/gguf/gguf_file_writer.h"

namespace nvhcq::llm {

class TensorStreamer {
 public:
  // Fills row `row` (the tensor's dims[0] values) with f32 values.
  using RowFn = std::function<void(int64_t row, float* values)>;

  TensorStreamer(GgufFileWriter& out, cpu::ThreadPool& pool, uint64_t chunk_bytes = 32ull << 20);
  ~TensorStreamer();
  TensorStreamer(const TensorStreamer&) = delete;
  TensorStreamer& operator=(const TensorStreamer&) = delete;

  // Writes the writer's current tensor (which must be `info`) from rows made by
  // `make_row`, converted to info.type with the quant layer's reference quantizer.
  void write_rows(const GgufTensorInfo& info, const RowFn& make_row);
  // Writes the current tensor's bytes as they are.
  void write_bytes(const GgufTensorInfo& info, std::span<const uint8_t> bytes);
  // Waits for the last chunk to reach the writer.
  void flush();

 private:
  void submit(std::vector<uint8_t>& chunk, size_t n);

  GgufFileWriter& out_;
  cpu::ThreadPool& pool_;
  uint64_t chunk_bytes_;
  std::vector<uint8_t> buffers_[2];
  int current_ = 0;
  std::future<void> pending_;
};

}  // namespace nvhcq::llm
