#pragma once
// Helpers for tests that need a GPU: they skip (GTEST_SKIP) with a reason when the
// machine has none, so CI without a GPU reports them as skipped, not passed.

#include <gtest/gtest.h>

#include <string>

namespace nvhcq::testing {

// True when this machine has the RM driver's nodes (/dev/nvidiactl and a GPU node).
bool has_rm_gpu();
// True when libcuda loads and cuInit succeeds.
bool has_cuda();
// A one-line reason a GPU test is skipped here.
std::string no_gpu_reason();

}  // namespace nvhcq::testing

#define NVHCQ_REQUIRE_RM_GPU()                                                    \
  do {                                                                            \
    if (!::nvhcq::testing::has_rm_gpu()) GTEST_SKIP() << ::nvhcq::testing::no_gpu_reason(); \
  } while (0)

#define NVHCQ_REQUIRE_CUDA()                                                       \
  do {                                                                             \
    if (!::nvhcq::testing::has_cuda()) GTEST_SKIP() << "libcuda with a GPU is not available"; \
  } while (0)
