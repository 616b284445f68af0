#pragma once
// Builds a GGUF file: metadata of every type and a table of tensors laid out with
// the file's alignment. GgufWriter only plans the file (no I/O); the bytes go out
// through GgufFileWriter, which streams tensor data straight to disk, or through
// to_bytes() for small files made in memory.
//
// Files follow ggml's layout exactly (header, metadata, tensor table, padding to
// the alignment, then each tensor's data padded to the alignment), so llama.cpp
// loads them.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llm/gguf/gguf_metadata.h"
#include "llm/gguf/gguf_tensor_info.h"

namespace nvhcq::llm {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = kGgufDefaultVersion);

  const GgufMetadata& metadata() const { return metadata_; }
  // Sets a metadata key. Setting general.alignment checks it (u32, a power of two)
  // and lays the tensors out again.
  void set(std::string key, GgufValue value);
  template <GgufScalar T>
  void set_scalar(std::string key, T value) {
    set(std::move(key), GgufValue::scalar(value));
  }
  void set_string(std::string key, std::string value) {
    set(std::move(key), GgufValue::string(std::move(value)));
  }
  void set_string_array(std::string key, std::vector<std::string> values) {
    set(std::move(key), GgufValue::string_array(std::move(values)));
  }
  template <GgufScalar T>
  void set_array(std::string key, const std::vector<T>& values) {
    set(std::move(key), GgufValue::array(values));
  }
  // Copies every entry of `other` (general.alignment included).
  void copy_metadata(const GgufMetadata& other);
  bool erase(std::string_view key);

  void set_alignment(uint32_t alignment) { set_scalar(std::string(kGgufAlignmentKey), alignment); }
  uint32_t alignment() const { return alignment_; }
  uint32_t version() const { return version_; }

  // Declares the next tensor. Data is written in declaration order. Throws
  // FormatError for a bad name (empty, 64 bytes or longer, duplicate), a bad shape
  // (1 to 4 dimensions, whole blocks per row) or an unknown type.
  const GgufTensorInfo& add_tensor(std::string name, GgmlType type, std::vector<uint64_t> dims);
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }

  // Where the data section starts: the size of everything before it.
  uint64_t data_offset() const;
  // The size of the whole file.
  uint64_t file_size() const;
  // Header, metadata, tensor table and the padding up to data_offset().
  std::vector<uint8_t> header_bytes() const;
  // The whole file in memory; data[i] holds tensor i's bytes (exactly n_bytes).
  std::vector<uint8_t> to_bytes(std::span<const std::span<const uint8_t>> data) const;

 private:
  void lay_out();
  uint64_t header_size() const;

  uint32_t version_;
  uint32_t alignment_ = kGgufDefaultAlignment;
  GgufMetadata metadata_;
  std::vector<GgufTensorInfo> tensors_;
};

// Rounds `offset` up to a multiple of `alignment` (a power of two).
inline uint64_t gguf_align(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

}  // namespace nvhcq::llm
