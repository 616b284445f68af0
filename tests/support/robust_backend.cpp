#include <gtest/gtest.h>

#include "support/robust_backend.h"

#include "compile/nvrtc_api.h"
#include "drv/tegra/tegra_gpu.h"
#include "support/gpu_env.h"

namespace nvhcq::testing {

RobustBackend rm_robust_backend() {
  RobustBackend b;
  b.name = "rm";
  b.open = [](const gpu::DeviceOptions& o) { return gpu::Device::open(0, o); };
  b.unavailable = []() -> std::string {
    if (drv::tegra::TegraGpu::present()) return "a Jetson: its GPU is the tegra backend's";
    if (!has_rm_gpu()) return no_gpu_reason();
    if (!compile::nvrtc_available()) return "NVRTC is not installed (needed to build test kernels)";
    return {};
  };
  return b;
}

RobustBackend tegra_robust_backend() {
  RobustBackend b;
  b.name = "tegra";
  b.open = [](const gpu::DeviceOptions& o) {
    return std::make_unique<gpu::Device>(std::make_unique<drv::tegra::TegraGpu>(), o);
  };
  b.unavailable = []() -> std::string {
    if (!drv::tegra::TegraGpu::present())
      return "not a Jetson (no /dev/nvgpu/igpu0/ctrl and /dev/nvmap)";
    if (!compile::nvrtc_available()) return "NVRTC is not installed (needed to build test kernels)";
    return {};
  };
  return b;
}

}  // namespace nvhcq::testing
