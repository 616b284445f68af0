#include "compile/nvrtc_api.h"

#include "base/dynlib.h"
#include "base/error.h"

namespace nvhcq::compile {
namespace {

NvrtcApi load() {
  // libnvrtc.so is the development link; versioned names cover runtime-only installs.
  DynLib lib = DynLib::open("NVRTC (libnvrtc)",
                            {"libnvrtc.so", "libnvrtc.so.[0-9][0-9]", "libnvrtc.so.[0-9][0-9].*"},
                            cuda_library_dirs());
  NvrtcApi api{};
  lib.bind(api.nvrtcGetErrorString, "nvrtcGetErrorString");
  lib.bind(api.nvrtcVersion, "nvrtcVersion");
  lib.bind(api.nvrtcCreateProgram, "nvrtcCreateProgram");
  lib.bind(api.nvrtcDestroyProgram, "nvrtcDestroyProgram");
  lib.bind(api.nvrtcCompileProgram, "nvrtcCompileProgram");
  lib.bind(api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  lib.bind(api.nvrtcGetProgramLog, "nvrtcGetProgramLog");
  lib.bind(api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  lib.bind(api.nvrtcGetCUBIN, "nvrtcGetCUBIN");
  lib.bind(api.nvrtcGetPTXSize, "nvrtcGetPTXSize");
  lib.bind(api.nvrtcGetPTX, "nvrtcGetPTX");
  lib.bind(api.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", false);
  lib.bind(api.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", false);
  api.path = lib.path();
  if (api.nvrtcVersion(&api.major, &api.minor) != kNvrtcSuccess) {
    throw Error("NVRTC at " + api.path + " does not report its version", "nvrtcVersion");
  }
  return api;
}

}  // namespace

const NvrtcApi& nvrtc() {
  return LoadedOnce<NvrtcApi, load>::get();
}

bool nvrtc_available() {
  return LoadedOnce<NvrtcApi, load>::available();
}

}  // namespace nvhcq::compile
