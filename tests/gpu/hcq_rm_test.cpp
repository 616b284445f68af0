// The HCQ suite on the real RM driver (an NVIDIA GPU on this machine).

#include "cases/hcq_suite.h"
#include "compile/nvrtc_api.h"
#include "support/gpu_env.h"

namespace nvhcq::testing {
namespace {

HcqBackend rm_backend() {
  HcqBackend b;
  b.name = "rm";
  b.open = [] { return gpu::Device::open(0); };
  b.unavailable = []() -> std::string {
    if (!has_rm_gpu()) return no_gpu_reason();
    if (!compile::nvrtc_available()) return "NVRTC is not installed (needed to build test kernels)";
    return {};
  };
  return b;
}

INSTANTIATE_TEST_SUITE_P(Rm, HcqSuite, ::testing::Values(rm_backend()), backend_name);

}  // namespace
}  // namespace nvhcq::testing
