// The GPU-backend suites without a GPU: the Jit on "cpu" (which runs the function
// every call) and on "emu", the host emulator of the GPU backend, which records
// and replays like "nv" and "cuda" do; the whole-graph comparisons on "emu".
// tests/gpu/tensor_suites_gpu_test.cpp runs the same suites on "nv" and "cuda".
#include "tensor/gpu_graph_cases.h"
#include "tensor/jit_cases.h"

namespace nvhcq::tensor {
namespace {

INSTANTIATE_TEST_SUITE_P(cpu, JitSuite, ::testing::Values(std::string("cpu")));
INSTANTIATE_TEST_SUITE_P(emu, JitSuite, ::testing::Values(std::string("emu")));
INSTANTIATE_TEST_SUITE_P(emu, GpuGraphs, ::testing::Values(std::string("emu")));

}  // namespace
}  // namespace nvhcq::tensor
