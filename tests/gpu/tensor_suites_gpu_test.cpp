// The tensor GPU-backend suites of tests/tensor/ on the GPU: the Jit suite
// (jit_cases.cpp; capture and replay as one submission of chained QMDs on "nv",
// as a CUDA graph on "cuda") and the whole-graph comparisons with the CPU backend
// (gpu_graph_cases.cpp; large f16/bf16 matmuls run on tensor cores here). Skip
// without a GPU.
#include "tensor/gpu_graph_cases.h"
#include "tensor/jit_cases.h"

namespace nvhcq::tensor {
namespace {

INSTANTIATE_TEST_SUITE_P(nv, JitSuite, ::testing::Values(std::string("nv")));
INSTANTIATE_TEST_SUITE_P(cuda, JitSuite, ::testing::Values(std::string("cuda")));
INSTANTIATE_TEST_SUITE_P(nv, GpuGraphs, ::testing::Values(std::string("nv")));
INSTANTIATE_TEST_SUITE_P(cuda, GpuGraphs, ::testing::Values(std::string("cuda")));

}  // namespace
}  // namespace nvhcq::tensor
