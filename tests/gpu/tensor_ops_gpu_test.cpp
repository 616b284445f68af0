// The op suite (tests/ops/*_cases.cpp, the Networks and EdgeTensors suites of
// tests/ops/robust_op_cases.h included) on the GPU tensor backends: every case on
// "nv" (nvhcq's direct path) and on "cuda" (the CUDA driver API), the same cases
// on both (f64 cases are left out: the GPU backends do not support f64). New
// device buffers are poisoned so an element a kernel fails to write is caught.
// Without a GPU (or without NVRTC/libcuda) the cases skip.
//
// NVHCQ_EMU_OPS=1 adds the same cases on "emu", the host emulator of the GPU
// backend (tests/tensor/emu_device.h): slow (each kernel is compiled by the host
// C++ compiler), meant for developing the code generator without a GPU:
//   NVHCQ_EMU_OPS=1 build/tests/test_gpu --gtest_filter='emu/*'

#include <cstdlib>

#include "ops/op_cases.h"
#include "ops/robust_op_cases.h"
#include "tensor/gpu/gpu_backend.h"
#include "tensor/gpu_test_devices.h"

namespace nvhcq::optest {
namespace {

class PoisonGpuBuffers : public ::testing::Environment {
 public:
  void SetUp() override { tensor::GpuBackend::set_poison_new_buffers(true); }
};
const auto* const kPoison = ::testing::AddGlobalTestEnvironment(new PoisonGpuBuffers);

std::vector<OpParam> on_gpu(const std::string& backend, const std::vector<OpCase>& cases) {
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

#define NVHCQ_GPU_SUITE(Suite, cases)                                                              \
  INSTANTIATE_TEST_SUITE_P(nv, Suite, ::testing::ValuesIn(on_gpu("nv", cases())), param_name);     \
  INSTANTIATE_TEST_SUITE_P(cuda, Suite, ::testing::ValuesIn(on_gpu("cuda", cases())), param_name); \
  INSTANTIATE_TEST_SUITE_P(emu, Suite, ::testing::ValuesIn(on_gpu("emu", cases())), param_name)

NVHCQ_GPU_SUITE(UnaryOps, unary_cases);
NVHCQ_GPU_SUITE(BinaryOps, binary_cases);
NVHCQ_GPU_SUITE(Reductions, reduction_cases);
NVHCQ_GPU_SUITE(Movement, movement_cases);
NVHCQ_GPU_SUITE(Indexing, indexing_cases);
NVHCQ_GPU_SUITE(Linalg, linalg_cases);
NVHCQ_GPU_SUITE(NeuralNet, nn_cases);
NVHCQ_GPU_SUITE(Creation, creation_cases);
NVHCQ_GPU_SUITE(OpErrors, error_cases);
NVHCQ_GPU_SUITE(Models, model_cases);
NVHCQ_GPU_SUITE(Networks, network_cases);
NVHCQ_GPU_SUITE(EdgeTensors, edge_tensor_cases);

}  // namespace
}  // namespace nvhcq::optest
