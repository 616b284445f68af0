// The Jit suite (tests/tensor/jit_cases.cpp) on the GPU tensor backends: capture
// and replay as one submission of chained QMDs on "nv", as a CUDA graph on
// "cuda". Skips without a GPU.
#include "tensor/jit_cases.h"

namespace nvhcq::tensor {
namespace {

INSTANTIATE_TEST_SUITE_P(nv, JitSuite, ::testing::Values(std::string("nv")));
INSTANTIATE_TEST_SUITE_P(cuda, JitSuite, ::testing::Values(std::string("cuda")));

}  // namespace
}  // namespace nvhcq::tensor
