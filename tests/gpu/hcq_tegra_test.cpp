// The HCQ suite on a real Jetson (nvgpu + nvmap); skips elsewhere. The same
// suite runs against the simulated Jetson in test_sim on every commit.

#include "cases/hcq_suite.h"
#include "compile/nvrtc_api.h"
#include "drv/tegra/tegra_gpu.h"

namespace nvhcq::testing {
namespace {

HcqBackend tegra_backend() {
  HcqBackend b;
  b.name = "tegra";
  b.open = [] { return std::make_unique<gpu::Device>(std::make_unique<drv::tegra::TegraGpu>()); };
  b.unavailable = []() -> std::string {
    if (!drv::tegra::TegraGpu::present())
      return "not a Jetson (no /dev/nvgpu/igpu0/ctrl and /dev/nvmap)";
    if (!compile::nvrtc_available()) return "NVRTC is not installed (needed to build test kernels)";
    return {};
  };
  return b;
}

INSTANTIATE_TEST_SUITE_P(Tegra, HcqSuite, ::testing::Values(tegra_backend()), backend_name);

}  // namespace
}  // namespace nvhcq::testing
