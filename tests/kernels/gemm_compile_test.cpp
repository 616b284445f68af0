// The GEMM and elementwise kernel files compile with NVRTC for the GPUs nvhcq
// targets, contain every kernel gemm_plan.cpp names, and the GEMM kernels fit
// their registers: no spills to local memory, and a full CTA fits an SM's
// register file. Skips where NVRTC is not installed.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "gpu/cubin.h"
#include "kernels/gemm_plan.h"

namespace nvhcq::kernels {
namespace {

#define REQUIRE_NVRTC() \
  if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here"

gpu::Cubin compile_file(const std::string& file, const std::string& arch) {
  compile::CompileOptions o;
  o.arch = arch;
  auto m = compile::compile_embedded(file, o);
  return gpu::Cubin(m.cubin);
}

// Threads per CTA of a GEMM kernel, from its plan (every variant, any shape it takes).
uint32_t threads_of(const std::string& kernel) {
  for (GemmType t : {GemmType::kF32, GemmType::kF16, GemmType::kBF16}) {
    for (const auto& v : gemm_variants(t, "sm_90")) {
      GemmProblem p{t, 256, 256, 256, true, "sm_90"};
      KernelLaunch l = plan_gemm(p, 132, v);
      if (l.kernel == kernel) return l.block[0] * l.block[1] * l.block[2];
    }
  }
  return 0;
}

void expect_gemm_kernels_fit(const std::string& file, const std::string& arch) {
  SCOPED_TRACE(file + " for " + arch);
  gpu::Cubin cubin = compile_file(file, arch);
  auto names = gemm_kernel_names(file);
  ASSERT_FALSE(names.empty());
  for (const auto& name : names) {
    ASSERT_TRUE(cubin.kernels().count(name)) << name << " is missing";
    const gpu::CubinKernel& k = cubin.kernel(name);
    EXPECT_EQ(k.local_bytes_per_thread, 0u) << name << " spills registers to local memory";
    EXPECT_GT(k.registers, 0u) << name;
    uint32_t threads = threads_of(name);
    ASSERT_GT(threads, 0u) << name;
    EXPECT_LE(k.registers * threads, 65536u) << name << ": a CTA does not fit the register file";
    if (k.max_threads != 0) {
      EXPECT_GE(k.max_threads, threads) << name << ": launch bounds below the plan";
    }
  }
}

TEST(GemmKernelsCompile, F32SimtForHopperAndOrin) {
  REQUIRE_NVRTC();
  expect_gemm_kernels_fit("gemm_f32.cu", "sm_90");
  expect_gemm_kernels_fit("gemm_f32.cu", "sm_87");
}

TEST(GemmKernelsCompile, TensorCoreForHopperAndOrin) {
  REQUIRE_NVRTC();
  expect_gemm_kernels_fit("gemm_mma.cu", "sm_90");
  expect_gemm_kernels_fit("gemm_mma.cu", "sm_87");
}

TEST(GemmKernelsCompile, WarpgroupKernelForHopper) {
  REQUIRE_NVRTC();
  expect_gemm_kernels_fit("gemm_wgmma.cu", "sm_90a");
}

TEST(GemmKernelsCompile, ElementwiseHasEveryKernel) {
  REQUIRE_NVRTC();
  for (const char* arch : {"sm_90", "sm_87"}) {
    gpu::Cubin cubin = compile_file("elementwise.cu", arch);
    for (const auto& name : elementwise_kernel_names()) {
      ASSERT_TRUE(cubin.kernels().count(name)) << name << " is missing for " << arch;
      EXPECT_EQ(cubin.kernel(name).local_bytes_per_thread, 0u) << name;
    }
  }
}

TEST(GemmKernelsCompile, PlansNameKernelsThatExist) {
  REQUIRE_NVRTC();
  gpu::Cubin mma = compile_file("gemm_mma.cu", "sm_90");
  gpu::Cubin f32 = compile_file("gemm_f32.cu", "sm_90");
  for (uint32_t n : {1u, 10u, 17u, 256u, 4096u}) {
    for (GemmType t : {GemmType::kF32, GemmType::kF16, GemmType::kBF16}) {
      KernelLaunch l = plan_gemm(GemmProblem{t, n, n, n, true}, 132);
      const gpu::Cubin& c = t == GemmType::kF32 ? f32 : mma;
      EXPECT_TRUE(c.kernels().count(l.kernel)) << l.kernel;
      EXPECT_EQ(l.file, t == GemmType::kF32 ? "gemm_f32.cu" : "gemm_mma.cu");
      EXPECT_LE(l.shared_bytes, 227u * 1024) << l.kernel;
    }
  }
}

}  // namespace
}  // namespace nvhcq::kernels
