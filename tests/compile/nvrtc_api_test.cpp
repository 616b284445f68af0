#include "compile/nvrtc_api.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/embedded.h"

namespace nvhcq::compile {
namespace {

// NVRTC is part of the CUDA toolkit, present on CI and the GPU machines; where it
// is absent the compile tests skip.
#define REQUIRE_NVRTC() \
  if (!nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here"

TEST(Nvrtc, LoadsAndReportsVersion) {
  REQUIRE_NVRTC();
  const auto& api = nvrtc();
  EXPECT_GE(api.major, 11);
  EXPECT_FALSE(api.path.empty());
}

TEST(Nvrtc, CompilesEmbeddedSelftestToCubinElf) {
  REQUIRE_NVRTC();
  const auto& api = nvrtc();
  std::string src(kernels::embedded_source("selftest.cu"));
  std::string common(kernels::embedded_source("common.cuh"));
  const char* headers[] = {common.c_str()};
  const char* names[] = {"common.cuh"};
  nvrtcProgram prog = nullptr;
  ASSERT_EQ(api.nvrtcCreateProgram(&prog, src.c_str(), "selftest.cu", 1, headers, names),
            kNvrtcSuccess);
  const char* opts[] = {"--gpu-architecture=sm_90"};
  nvrtcResult rc = api.nvrtcCompileProgram(prog, 1, opts);
  size_t log_size = 0;
  api.nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  api.nvrtcGetProgramLog(prog, log.data());
  ASSERT_EQ(rc, kNvrtcSuccess) << log;
  size_t size = 0;
  ASSERT_EQ(api.nvrtcGetCUBINSize(prog, &size), kNvrtcSuccess);
  std::vector<char> cubin(size);
  ASSERT_EQ(api.nvrtcGetCUBIN(prog, cubin.data()), kNvrtcSuccess);
  api.nvrtcDestroyProgram(&prog);
  ASSERT_GT(size, 64u);
  EXPECT_EQ(std::string(cubin.data() + 1, 3), "ELF");
}

}  // namespace
}  // namespace nvhcq::compile
