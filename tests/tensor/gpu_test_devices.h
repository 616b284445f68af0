#pragma once
// The tensor devices the GPU-backend tests run on, and why one cannot run here:
// "nv" and "cuda" need an NVIDIA GPU and NVRTC (and libcuda for "cuda"); "emu"
// (tests/tensor/emu_device.h) needs the host C++ compiler; "cpu" always runs.

#include <string>

#include "compile/nvrtc_api.h"
#include "support/gpu_env.h"
#include "tensor/capture.h"
#include "tensor/emu_device.h"

namespace nvhcq::tensor {

// "" when `device` can run here, else the reason it cannot (for GTEST_SKIP).
// Registers "emu" when it is asked for.
inline std::string test_device_unusable(const std::string& device) {
  if (device == "cpu") return "";
  if (device == "emu") {
    if (!emu::emu_available()) return "no host C++ compiler for the GPU-backend emulator";
    emu::register_emu_device();
    return "";
  }
  if (!testing::has_rm_gpu()) return testing::no_gpu_reason();
  if (!compile::nvrtc_available()) return "NVRTC is not installed";
  if (device == "cuda" && !testing::has_cuda()) return "libcuda with a GPU is not available";
  return "";
}

// Whether the device's backend records kernels (so a Jit replays).
inline bool test_device_records(const std::string& device) {
  return dynamic_cast<CaptureBackend*>(&backend_for(device)) != nullptr;
}

}  // namespace nvhcq::tensor
