#pragma once
// What a GGUF file says about one tensor: its name, element type, shape and where
// its bytes lie in the data section. dims[0] is ggml's ne[0], the fastest-varying
// dimension (the length of a row).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llm/ggml_type.h"

namespace nvhcq::llm {

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<uint64_t> dims;  // 1 to 4 entries
  uint64_t offset = 0;         // from the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;

  // ggml's ne[i]: 1 past the last dimension.
  uint64_t ne(size_t i) const { return i < dims.size() ? dims[i] : 1; }
  // "[4096, 32000]"
  std::string shape_string() const;
};

// Elements and bytes of a tensor of `type` and `dims`. Throws FormatError naming
// `name` when a dimension is not a whole number of blocks, a dimension exceeds
// ggml's int64 range, or the size overflows.
void gguf_tensor_size(const std::string& name, GgmlType type, const std::vector<uint64_t>& dims,
                      uint64_t* n_elements, uint64_t* n_bytes);

// A tensor of a GGUF file: its description and its bytes inside the file's mapping.
struct GgufTensorView {
  const GgufTensorInfo* info = nullptr;
  std::span<const uint8_t> data;

  const std::string& name() const { return info->name; }
  GgmlType type() const { return info->type; }
  const std::vector<uint64_t>& dims() const { return info->dims; }
};

}  // namespace nvhcq::llm
