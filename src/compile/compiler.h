#pragma once
// CUDA C -> CUBIN through NVRTC, for one GPU architecture, with an on-disk cache
// keyed by the source (and every header it may include), the architecture, the
// options and the NVRTC and nvhcq versions. The same CUBIN feeds the direct path
// (gpu::Program) and the CUDA backend (cuModuleLoadData).

#include <cstdint>
#include <string>
#include <vector>

namespace nvhcq::compile {

struct CompileOptions {
  std::string arch = "sm_90";            // "sm_87", "sm_90", "sm_90a", ...
  std::vector<std::string> defines;      // "NAME" or "NAME=VALUE"
  std::vector<std::string> extra_flags;  // passed to NVRTC as they are
  bool fast_math = false;
  bool line_info = false;
};

struct CompiledModule {
  std::vector<uint8_t> cubin;
  std::string log;        // NVRTC's warnings, if any
  bool from_cache = false;
};

// Compiles `source` (a translation unit named `name`, which may #include any
// embedded kernel header, and the CUDA toolkit headers when they are installed).
// Throws Error with NVRTC's log when compilation fails.
CompiledModule compile(const std::string& source, const std::string& name,
                       const CompileOptions& options);
// Compiles the embedded kernel file `file` (e.g. "selftest.cu").
CompiledModule compile_embedded(const std::string& file, const CompileOptions& options);

// The cache folder: $NVHCQ_CACHE_DIR, $XDG_CACHE_HOME/nvhcq or ~/.cache/nvhcq.
// NVHCQ_CACHE=0 turns the cache off.
std::string cache_dir();

}  // namespace nvhcq::compile
