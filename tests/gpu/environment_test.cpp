// The GPU machine's environment as nvhcq sees it. Skips without a GPU.

#include <gtest/gtest.h>

#include "cuda/cuda_api.h"
#include "drv/probe.h"
#include "support/gpu_env.h"

namespace nvhcq {
namespace {

TEST(GpuEnvironment, RmNodesAndLibcudaAgree) {
  NVHCQ_REQUIRE_RM_GPU();
  auto nodes = drv::probe_driver_nodes();
  EXPECT_TRUE(nodes.rm_uvm) << "/dev/nvidia-uvm is needed for the direct path";
  EXPECT_FALSE(nodes.rm_version.empty());
  NVHCQ_REQUIRE_CUDA();
  int count = 0;
  cuda::check(cuda::cuda().cuDeviceGetCount(&count), "cuDeviceGetCount");
  EXPECT_EQ(static_cast<size_t>(count), nodes.rm_gpus.size());
}

}  // namespace
}  // namespace nvhcq
