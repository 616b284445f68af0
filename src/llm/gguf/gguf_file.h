#pragma once
// A GGUF file opened for reading: the header, metadata and tensor table parsed and
// checked, the tensor data left in place in the file's memory mapping. Tensor views
// point into that mapping (zero-copy), so they live as long as the GgufFile.
//
// Every structural problem is a FormatError naming the file and what is wrong:
// a bad magic or version, truncation, counts or lengths larger than the file could
// hold (checked before any allocation), unknown value or tensor types, duplicate
// keys or tensor names, a bad general.alignment, tensor data outside the file,
// misaligned or overlapping.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llm/gguf/gguf_metadata.h"
#include "llm/gguf/gguf_tensor_info.h"
#include "llm/gguf/mapped_file.h"

namespace nvhcq::llm {

class GgufFile {
 public:
  // Maps and parses the file at `path`.
  static GgufFile open(const std::string& path);
  // Parses bytes the caller keeps alive for the life of the GgufFile (tests, fuzzing).
  static GgufFile from_bytes(std::span<const uint8_t> bytes, std::string name = "<memory>");
  // Parses bytes it takes ownership of.
  static GgufFile from_owned_bytes(std::vector<uint8_t> bytes, std::string name = "<memory>");

  GgufFile(GgufFile&&) noexcept = default;
  GgufFile& operator=(GgufFile&&) noexcept = default;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // Where the data section starts in the file.
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return bytes_.size(); }
  std::span<const uint8_t> bytes() const { return bytes_; }

  const GgufMetadata& metadata() const { return metadata_; }

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // FormatError "<file>: missing tensor 'x'" when absent.
  const GgufTensorInfo& tensor_info(std::string_view name) const;
  std::span<const uint8_t> tensor_data(const GgufTensorInfo& info) const;
  GgufTensorView tensor(std::string_view name) const;

  // Prefetch hint for a tensor's pages (no effect on in-memory files).
  void will_need(const GgufTensorInfo& info) const;

 private:
  GgufFile() = default;
  void parse();

  std::string name_;
  std::unique_ptr<MappedFile> mapping_;
  std::vector<uint8_t> owned_;
  std::span<const uint8_t> bytes_;

  uint32_t version_ = 0;
  uint64_t alignment_ = 0;
  uint64_t data_offset_ = 0;
  GgufMetadata metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace nvhcq::llm
