#pragma once
// The few NVRTC entry points nvhcq uses, declared here so that no CUDA header is
// needed to build. The library is loaded at run time (libnvrtc.so*).

#include <cstddef>
#include <string>

namespace nvhcq::compile {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct NvrtcApi {
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int* major, int* minor);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* prog, const char* src, const char* name,
                                    int num_headers, const char* const* headers,
                                    const char* const* include_names);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* prog);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram prog, int num_options,
                                     const char* const* options);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram prog, char* log);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram prog, char* cubin);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram prog, char* ptx);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int* count);  // optional
  nvrtcResult (*nvrtcGetSupportedArchs)(int* archs);     // optional

  std::string path;  // where the library was loaded from
  int major = 0, minor = 0;
};

// Loads NVRTC once (thread-safe) and returns its entry points; throws Error naming
// the folders searched when it is not installed.
const NvrtcApi& nvrtc();
// True when NVRTC can be loaded; never throws.
bool nvrtc_available();

}  // namespace nvhcq::compile
