#pragma once
// The CUDA C sources of src/kernels/, embedded at build time (cmake/embed_kernels.cmake).

#include <span>
#include <string_view>

namespace nvhcq::kernels {

struct EmbeddedSource {
  std::string_view name;  // file name, e.g. "gemm.cu"
  std::string_view text;
};

std::span<const EmbeddedSource> embedded_sources();
// The source named `name`; throws Error when there is none.
std::string_view embedded_source(std::string_view name);

}  // namespace nvhcq::kernels
