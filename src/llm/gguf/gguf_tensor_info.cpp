#include "llm/gguf/gguf_tensor_info.h"

#include <cstdint>
#include <limits>

#include "base/error.h"

namespace nvhcq::llm {

std::string GgufTensorInfo::shape_string() const {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

void gguf_tensor_size(const std::string& name, GgmlType type, const std::vector<uint64_t>& dims,
                      uint64_t* n_elements, uint64_t* n_bytes) {
  // ggml holds sizes as int64_t: anything above that range is corrupt.
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const auto& traits_ = traits(type);
  uint64_t elements = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > kMax) {
      throw FormatError("tensor '" + name + "' dimension " + std::to_string(i) + " is " +
                        std::to_string(dims[i]) + ", beyond ggml's range");
    }
    if (dims[i] != 0 && elements > kMax / dims[i]) {
      throw FormatError("tensor '" + name + "' has more elements than ggml can address");
    }
    elements *= dims[i];
  }
  const uint64_t ne0 = dims.empty() ? 1 : dims[0];
  if (ne0 % traits_.block_elements != 0) {
    throw FormatError("tensor '" + name + "' row of " + std::to_string(ne0) +
                      " elements is not a whole number of " + std::string(traits_.name) +
                      " blocks of " + std::to_string(traits_.block_elements));
  }
  const uint64_t row_bytes = ne0 / traits_.block_elements * traits_.block_bytes;
  uint64_t bytes = row_bytes;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != 0 && bytes > kMax / dims[i]) {
      throw FormatError("tensor '" + name + "' size overflows 64 bits");
    }
    bytes *= dims[i];
  }
  if (elements == 0) bytes = 0;
  *n_elements = elements;
  *n_bytes = bytes;
}

}  // namespace nvhcq::llm
