#pragma once
// Streams a planned GGUF file (a GgufWriter) to disk: the header goes out when the
// writer is created, then tensor data in declaration order, in as many pieces as
// the caller likes, padding inserted between tensors. A multi-GB model is thus
// written while only the piece at hand sits in memory.
//
// The file is written as "<path>.tmp" and renamed to <path> by finish(), so a
// crash or an exception never leaves a truncated file under the final name.

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "llm/gguf/gguf_writer.h"

namespace nvhcq::llm {

class GgufFileWriter {
 public:
  // Writes the header of `plan` (which must not change afterwards) to path + ".tmp".
  GgufFileWriter(const GgufWriter& plan, std::string path);
  GgufFileWriter(const GgufFileWriter&) = delete;
  GgufFileWriter& operator=(const GgufFileWriter&) = delete;
  // Removes the temporary file unless finish() succeeded.
  ~GgufFileWriter();

  // The tensor the next bytes belong to, or nullptr when all data is written.
  const GgufTensorInfo* current_tensor() const;
  // Appends bytes to the current tensor; they must not run past its end (UsageError).
  void write(std::span<const uint8_t> bytes);
  // Writes one whole tensor, which must be the current one.
  void write_tensor(std::string_view name, std::span<const uint8_t> bytes);
  // Checks every tensor got all its bytes, flushes, closes and renames into place.
  void finish();

  uint64_t bytes_written() const { return written_; }

 private:
  void put(const void* data, size_t n);
  void pad_to(uint64_t file_offset);
  void close_file();

  const GgufWriter& plan_;
  std::string path_, tmp_path_;
  std::FILE* file_ = nullptr;
  size_t tensor_ = 0;          // index of the current tensor
  uint64_t tensor_done_ = 0;   // bytes of it already written
  uint64_t written_ = 0;
  uint64_t data_offset_ = 0;
  bool finished_ = false;
};

}  // namespace nvhcq::llm
