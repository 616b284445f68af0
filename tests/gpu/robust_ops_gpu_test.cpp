// The Networks and EdgeTensors suites (tests/ops/robust_op_cases.h) on the GPU
// tensor backends "nv" and "cuda" (cases that need f64 are left out: the GPU
// backends do not support it). Skip without a GPU.
//
// NVHCQ_EMU_OPS=1 adds them on "emu", the host emulator of the GPU backend (slow;
// for checking the GPU code generator without a GPU):
//   NVHCQ_EMU_OPS=1 build/tests/test_gpu --gtest_filter='emu/Networks*:emu/EdgeTensors*'
#include <cstdlib>

#include "ops/robust_op_cases.h"
#include "tensor/gpu_test_devices.h"

namespace nvhcq::optest {
namespace {

std::vector<OpParam> robust_on_gpu(const std::string& backend, const std::vector<OpCase>& cases) {
  if (backend == "emu") {
    const char* env = std::getenv("NVHCQ_EMU_OPS");
    if (env == nullptr || std::string(env) != "1") return {};
  }
  auto params = with_backend(backend, cases, [](DType t) { return t != DType::kF64; });
  for (auto& p : params) {
    auto run = p.c.run;
    p.c.run = [run, backend](const std::string& device) {
      const std::string why = tensor::test_device_unusable(backend);
      if (!why.empty()) GTEST_SKIP() << why;
      run(device);
    };
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(nv, Networks, ::testing::ValuesIn(robust_on_gpu("nv", network_cases())),
                         param_name);
INSTANTIATE_TEST_SUITE_P(cuda, Networks,
                         ::testing::ValuesIn(robust_on_gpu("cuda", network_cases())), param_name);
INSTANTIATE_TEST_SUITE_P(nv, EdgeTensors,
                         ::testing::ValuesIn(robust_on_gpu("nv", edge_tensor_cases())), param_name);
INSTANTIATE_TEST_SUITE_P(cuda, EdgeTensors,
                         ::testing::ValuesIn(robust_on_gpu("cuda", edge_tensor_cases())),
                         param_name);
INSTANTIATE_TEST_SUITE_P(emu, Networks, ::testing::ValuesIn(robust_on_gpu("emu", network_cases())),
                         param_name);
INSTANTIATE_TEST_SUITE_P(emu, EdgeTensors,
                         ::testing::ValuesIn(robust_on_gpu("emu", edge_tensor_cases())),
                         param_name);

}  // namespace
}  // namespace nvhcq::optest
