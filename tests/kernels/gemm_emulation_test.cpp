// The GEMM and elementwise kernels, compiled by the host compiler and run on the
// CPU warp emulator (emulation/kernel_emulation.h), against float64 references:
// every tile configuration, edge tiles in both dimensions, the generic loaders
// at odd shapes, and writes outside C caught by guard elements. This checks the
// kernels' indexing (swizzles, fragment layouts, pipeline waits, bounds) in CI,
// where there is no GPU; tests/gpu/ runs the same kernels on real hardware.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "base/error.h"
#include "cpu/half.h"
#include "kernels/emulation/emulation_skip.h"
#include "kernels/gemm_plan.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/elementwise.cu"
#include "kernels/gemm_f32.cu"
#include "kernels/gemm_mma.cu"
#include "kernels/gemm_wgmma.cu"
#pragma GCC diagnostic pop

namespace nvhcq::kernels {
namespace {

using Gemm16 = void (*)(uint16_t*, const uint16_t*, const uint16_t*, int, int, int);
using Gemm32 = void (*)(float*, const float*, const float*, int, int, int);

const std::map<std::string, Gemm16>& gemm16_kernels() {
  static const std::map<std::string, Gemm16> k = {
      {"gemm_mma_f16_128x256x32_s4", gemm_mma_f16_128x256x32_s4},
      {"gemm_mma_f16_128x256x64_s3", gemm_mma_f16_128x256x64_s3},
      {"gemm_mma_f16_128x128x32_s4", gemm_mma_f16_128x128x32_s4},
      {"gemm_mma_f16_64x64x32_s4", gemm_mma_f16_64x64x32_s4},
      {"gemm_mma_f16_generic", gemm_mma_f16_generic},
      {"gemm_mma_bf16_128x256x32_s4", gemm_mma_bf16_128x256x32_s4},
      {"gemm_mma_bf16_128x256x64_s3", gemm_mma_bf16_128x256x64_s3},
      {"gemm_mma_bf16_128x128x32_s4", gemm_mma_bf16_128x128x32_s4},
      {"gemm_mma_bf16_64x64x32_s4", gemm_mma_bf16_64x64x32_s4},
      {"gemm_mma_bf16_generic", gemm_mma_bf16_generic},
      {"gemm_wgmma_f16_128x256x64_s4", gemm_wgmma_f16_128x256x64_s4},
      {"gemm_wgmma_bf16_128x256x64_s4", gemm_wgmma_bf16_128x256x64_s4},
  };
  return k;
}

const std::map<std::string, Gemm32>& gemm32_kernels() {
  static const std::map<std::string, Gemm32> k = {
      {"gemm_f32_128x128", gemm_f32_128x128},
      {"gemm_f32_128x128_scalar", gemm_f32_128x128_scalar},
      {"gemm_f32_64x64", gemm_f32_64x64},
      {"gemm_f32_64x64_scalar", gemm_f32_64x64_scalar},
  };
  return k;
}

emu::LaunchConfig config_of(const KernelLaunch& l, bool deferred = true) {
  emu::LaunchConfig c;
  c.grid = emu::Dim3{l.grid[0], l.grid[1], l.grid[2]};
  c.block = emu::Dim3{l.block[0], l.block[1], l.block[2]};
  c.shared_bytes = l.shared_bytes;
  c.deferred_copies = deferred;
  return c;
}

// Guard elements before and after C (16 bytes each side keeps C aligned).
constexpr size_t kGuard = 8;
constexpr uint16_t kGuard16 = 0x7bcd;
constexpr float kGuard32 = -12345.5f;

struct Case {
  GemmType type;
  std::string variant;
  uint32_t m, n, k;
  bool deferred = true;
};

std::string describe(const Case& c) {
  return std::string(gemm_type_name(c.type)) + " " + (c.variant.empty() ? "auto" : c.variant) +
         " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
}

// Relative Frobenius error of `got` against `ref`; -1 when any value is not finite.
double rel_error(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) return -1;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& b,
                              uint32_t m, uint32_t n, uint32_t k) {
  std::vector<double> c(size_t{m} * n, 0.0);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      double av = a[size_t{i} * k + kk];
      for (uint32_t j = 0; j < n; ++j) c[size_t{i} * n + j] += av * b[size_t{kk} * n + j];
    }
  }
  return c;
}

void run_case(const Case& c, uint32_t sm_count = 132) {
  SCOPED_TRACE(describe(c));
  std::mt19937 rng(c.m * 7919 + c.n * 131 + c.k);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const size_t na = size_t{c.m} * c.k, nb = size_t{c.k} * c.n, nc = size_t{c.m} * c.n;
  std::vector<double> a(na), b(nb), got(nc);
  KernelLaunch plan =
      plan_gemm(GemmProblem{c.type, c.m, c.n, c.k, true, "sm_90"}, sm_count, c.variant);
  emu::clear_globals();
  std::string error;
  if (c.type == GemmType::kF32) {
    std::vector<float> A(na), B(nb), C(nc + 2 * kGuard, kGuard32);
    for (size_t i = 0; i < na; ++i) a[i] = A[i] = dist(rng);
    for (size_t i = 0; i < nb; ++i) b[i] = B[i] = dist(rng);
    for (size_t i = 0; i < nc; ++i) C[kGuard + i] = std::nanf("");
    emu::register_global(A.data(), na * 4);
    emu::register_global(B.data(), nb * 4);
    Gemm32 fn = gemm32_kernels().at(plan.kernel);
    error = emu::launch(config_of(plan, c.deferred),
                        [&] { fn(C.data() + kGuard, A.data(), B.data(), c.m, c.n, c.k); });
    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(C[i], kGuard32) << "write before C";
      ASSERT_EQ(C[kGuard + nc + i], kGuard32) << "write after C";
    }
    for (size_t i = 0; i < nc; ++i) got[i] = C[kGuard + i];
  } else {
    bool bf16 = c.type == GemmType::kBF16;
    auto round = [&](float f) { return bf16 ? cpu::float_to_bf16(f) : cpu::float_to_half(f); };
    auto value = [&](uint16_t v) { return bf16 ? cpu::bf16_to_float(v) : cpu::half_to_float(v); };
    std::vector<uint16_t> A(na), B(nb), C(nc + 2 * kGuard, kGuard16);
    for (size_t i = 0; i < na; ++i) a[i] = value(A[i] = round(dist(rng)));
    for (size_t i = 0; i < nb; ++i) b[i] = value(B[i] = round(dist(rng)));
    for (size_t i = 0; i < nc; ++i) C[kGuard + i] = 0xffff;  // NaN
    emu::register_global(A.data(), na * 2);
    emu::register_global(B.data(), nb * 2);
    Gemm16 fn = gemm16_kernels().at(plan.kernel);
    error = emu::launch(config_of(plan, c.deferred),
                        [&] { fn(C.data() + kGuard, A.data(), B.data(), c.m, c.n, c.k); });
    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(C[i], kGuard16) << "write before C";
      ASSERT_EQ(C[kGuard + nc + i], kGuard16) << "write after C";
    }
    for (size_t i = 0; i < nc; ++i) got[i] = value(C[kGuard + i]);
  }
  ASSERT_EQ(error, "") << plan.kernel;
  if (plan.file == "gemm_mma.cu") {
    emu::Stats st = emu::last_stats();
    EXPECT_GT(st.ldmatrix_matrices, 0u);
    // The swizzles make every ldmatrix conflict-free (the generic loader shares the layout).
    EXPECT_EQ(st.ldmatrix_extra_wavefronts, 0u) << plan.kernel << ": bank conflicts";
  }
  double err = rel_error(got, reference(a, b, c.m, c.n, c.k));
  double bound = c.type == GemmType::kF32 ? 1e-5 : c.type == GemmType::kF16 ? 2e-3 : 1e-2;
  EXPECT_GE(err, 0.0) << plan.kernel << " wrote a non-finite value (an element left unwritten?)";
  EXPECT_LT(err, bound) << plan.kernel;
}

TEST(GemmEmulation, EveryKernelIsEmulated) {
  for (const auto& name : gemm_kernel_names("gemm_mma.cu"))
    EXPECT_TRUE(gemm16_kernels().count(name)) << name;
  for (const auto& name : gemm_kernel_names("gemm_wgmma.cu"))
    EXPECT_TRUE(gemm16_kernels().count(name)) << name;
  for (const auto& name : gemm_kernel_names("gemm_f32.cu"))
    EXPECT_TRUE(gemm32_kernels().count(name)) << name;
}

// Two tiles in each dimension with partial edge tiles, and a K that is not a
// multiple of BK, for every aligned tensor-core configuration.
TEST(GemmEmulation, TensorCoreTilesWithEdges) {
  SKIP_WITHOUT_FIBERS();
  for (GemmType t : {GemmType::kF16, GemmType::kBF16}) {
    run_case({t, "128x256x32_s4", 145, 264, 104});
    run_case({t, "128x256x64_s3", 136, 280, 200});
    run_case({t, "128x128x32_s4", 200, 136, 72});
    run_case({t, "64x64x32_s4", 72, 120, 168});
  }
}

TEST(GemmEmulation, TensorCoreGenericLoaderAtOddShapes) {
  SKIP_WITHOUT_FIBERS();
  for (GemmType t : {GemmType::kF16, GemmType::kBF16}) {
    run_case({t, "", 1, 1, 1});
    run_case({t, "", 17, 33, 65});
    run_case({t, "generic", 70, 72, 40});  // aligned shape through the generic loader
  }
}

TEST(GemmEmulation, TensorCoreAutomaticChoiceAtSmallAndOddSizes) {
  SKIP_WITHOUT_FIBERS();
  run_case({GemmType::kF16, "", 8, 16, 8});
  run_case({GemmType::kBF16, "", 1, 256, 784});  // an MLP layer at batch 1
  run_case({GemmType::kF16, "", 3, 10, 128});
}

// Copies landing at issue rather than at the wait: the pipeline must not
// overwrite a slot that is still being read.
TEST(GemmEmulation, TensorCoreWithEagerCopies) {
  SKIP_WITHOUT_FIBERS();
  run_case({GemmType::kF16, "128x256x32_s4", 130, 264, 136, false});
  run_case({GemmType::kBF16, "64x64x32_s4", 100, 72, 200, false});
}

// The Hopper kernel: descriptors, 128-byte swizzles, the cp.async/wgmma ring
// (wgmma reads shared memory only when its group is waited for, so a slot
// refilled too early shows), edge tiles in every dimension.
TEST(GemmEmulation, WarpgroupKernelWithEdges) {
  SKIP_WITHOUT_FIBERS();
  run_case({GemmType::kBF16, kWgmmaVariant, 145, 264, 200});
  run_case({GemmType::kF16, kWgmmaVariant, 64, 256, 64});
  run_case({GemmType::kF16, kWgmmaVariant, 130, 200, 328, false});  // copies land at once
}

TEST(GemmEmulation, SimtF32Tiles) {
  SKIP_WITHOUT_FIBERS();
  run_case({GemmType::kF32, "128x128", 130, 132, 20});
  run_case({GemmType::kF32, "64x64", 70, 68, 36});
  run_case({GemmType::kF32, "128x128_scalar", 129, 131, 13});
  run_case({GemmType::kF32, "64x64_scalar", 17, 33, 65});
  run_case({GemmType::kF32, "", 1, 1, 1});
  run_case({GemmType::kF32, "", 5, 7, 3});
}

TEST(GemmEmulation, PlanRefusesVariantsThatCannotAddressTheShape) {
  EXPECT_THROW(plan_gemm(GemmProblem{GemmType::kF16, 16, 10, 16, true}, 132, "128x256x32_s4"),
               Error);
  EXPECT_THROW(plan_gemm(GemmProblem{GemmType::kF32, 16, 16, 6, true}, 132, "128x128"), Error);
  EXPECT_THROW(plan_gemm(GemmProblem{GemmType::kF16, 16, 16, 16, true}, 132, "nope"), Error);
  EXPECT_THROW(plan_gemm(GemmProblem{GemmType::kF16, 0, 16, 16, true}, 132), Error);
  EXPECT_EQ(plan_gemm(GemmProblem{GemmType::kF16, 16, 16, 16, false}, 132).kernel,
            "gemm_mma_f16_generic");
  EXPECT_EQ(plan_gemm(GemmProblem{GemmType::kBF16, 4096, 4096, 4096, true}, 132).kernel,
            "gemm_mma_bf16_128x256x32_s4");
  EXPECT_EQ(plan_gemm(GemmProblem{GemmType::kF32, 4096, 4096, 4096, true}, 132).kernel,
            "gemm_f32_128x128");
  // wgmma only where the architecture is known to be sm_90, and only when asked for (for now).
  EXPECT_THROW(plan_gemm(GemmProblem{GemmType::kF16, 256, 256, 256, true}, 132, kWgmmaVariant),
               Error);
  EXPECT_THROW(
      plan_gemm(GemmProblem{GemmType::kF16, 256, 256, 256, true, "sm_87"}, 132, kWgmmaVariant),
      Error);
  EXPECT_THROW(
      plan_gemm(GemmProblem{GemmType::kF16, 256, 250, 256, true, "sm_90"}, 132, kWgmmaVariant),
      Error);
  KernelLaunch w =
      plan_gemm(GemmProblem{GemmType::kBF16, 4096, 4096, 4096, true, "sm_90"}, 132, kWgmmaVariant);
  EXPECT_EQ(w.kernel, "gemm_wgmma_bf16_128x256x64_s4");
  EXPECT_EQ(w.arch_suffix, "a");
  EXPECT_EQ(w.grid[0], 32u * 16u);
  EXPECT_EQ(plan_gemm(GemmProblem{GemmType::kBF16, 4096, 4096, 4096, true, "sm_90"}, 132).file,
            "gemm_mma.cu");
}

// ---- elementwise ----

using Binary = void (*)(void*, const void*, const void*, uint64_t);
using Unary = void (*)(void*, const void*, uint64_t);

void run_elementwise(ElementwiseOp op, GemmType type, uint64_t n, size_t misalign) {
  SCOPED_TRACE(std::string(elementwise_op_name(op)) + " " + gemm_type_name(type) +
               " n=" + std::to_string(n) + " misalign=" + std::to_string(misalign));
  static const std::map<std::string, Binary> binary = {{"ew_add_f32", ew_add_f32},
                                                       {"ew_mul_f32", ew_mul_f32},
                                                       {"ew_add_f16", ew_add_f16},
                                                       {"ew_mul_f16", ew_mul_f16}};
  static const std::map<std::string, Unary> unary = {{"ew_exp_f32", ew_exp_f32},
                                                     {"ew_relu_f32", ew_relu_f32},
                                                     {"ew_exp_f16", ew_exp_f16},
                                                     {"ew_relu_f16", ew_relu_f16}};
  const bool half = type == GemmType::kF16;
  const size_t es = half ? 2 : 4;
  KernelLaunch plan = plan_elementwise(op, type, n, 2);  // few CTAs: the grid-stride loop wraps
  std::mt19937 rng(static_cast<uint32_t>(n));
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  // Room for the misalignment and guard bytes after the output.
  std::vector<uint8_t> a((n + 16) * es), b((n + 16) * es), out((n + 16) * es, 0x5a);
  std::vector<double> av(n), bv(n);
  for (uint64_t i = 0; i < n; ++i) {
    float x = dist(rng), y = dist(rng);
    if (half) {
      uint16_t hx = cpu::float_to_half(x), hy = cpu::float_to_half(y);
      std::memcpy(&a[(misalign + i) * es], &hx, 2);
      std::memcpy(&b[(misalign + i) * es], &hy, 2);
      av[i] = cpu::half_to_float(hx);
      bv[i] = cpu::half_to_float(hy);
    } else {
      std::memcpy(&a[(misalign + i) * es], &x, 4);
      std::memcpy(&b[(misalign + i) * es], &y, 4);
      av[i] = x;
      bv[i] = y;
    }
  }
  void* o = out.data() + misalign * es;
  const void* pa = a.data() + misalign * es;
  const void* pb = b.data() + misalign * es;
  std::string error = emu::launch(config_of(plan), [&] {
    if (elementwise_inputs(op) == 2) {
      binary.at(plan.kernel)(o, pa, pb, n);
    } else {
      unary.at(plan.kernel)(o, pa, n);
    }
  });
  ASSERT_EQ(error, "");
  for (size_t i = 0; i < misalign * es; ++i) ASSERT_EQ(out[i], 0x5a) << "write before the output";
  for (size_t i = (misalign + n) * es; i < out.size(); ++i)
    ASSERT_EQ(out[i], 0x5a) << "write after the output";
  for (uint64_t i = 0; i < n; ++i) {
    double want = elementwise_reference(op, av[i], bv[i]);
    double got;
    if (half) {
      uint16_t h;
      std::memcpy(&h, &out[(misalign + i) * es], 2);
      got = cpu::half_to_float(h);
      // f32 math, one rounding to f16: within half an f16 ulp (plus exp's few f32 ulps).
      ASSERT_NEAR(got, want, std::fabs(want) * 1.5e-3 + 1e-7) << i;
    } else {
      float f;
      std::memcpy(&f, &out[(misalign + i) * es], 4);
      got = f;
      ASSERT_NEAR(got, want, std::fabs(want) * 1e-6 + 1e-30) << i;
    }
  }
}

TEST(ElementwiseEmulation, EveryOpAndTypeWithTailsAndMisalignment) {
  SKIP_WITHOUT_FIBERS();
  for (GemmType t : {GemmType::kF32, GemmType::kF16}) {
    for (ElementwiseOp op :
         {ElementwiseOp::kAdd, ElementwiseOp::kMul, ElementwiseOp::kExp, ElementwiseOp::kRelu}) {
      run_elementwise(op, t, 4099, 0);  // vectors, the two-vector loop wrapping the grid, a tail
      run_elementwise(op, t, 37, 1);    // misaligned: element path only
    }
  }
}

TEST(ElementwiseEmulation, BiasActAddsPerColumnAndClamps) {
  SKIP_WITHOUT_FIBERS();
  const uint32_t rows = 5, cols = 37;
  for (GemmType t : {GemmType::kF32, GemmType::kF16}) {
    for (uint32_t relu : {0u, 1u}) {
      KernelLaunch plan = plan_bias_act(t, rows, cols, 1);
      std::vector<float> y(rows * cols), bias(cols);
      std::vector<uint16_t> yh(rows * cols), bh(cols);
      for (uint32_t i = 0; i < rows * cols; ++i)
        y[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.25f;
      for (uint32_t c = 0; c < cols; ++c)
        bias[c] = static_cast<float>(static_cast<int>(c % 7) - 3) * 0.5f;
      for (uint32_t i = 0; i < rows * cols; ++i) yh[i] = cpu::float_to_half(y[i]);
      for (uint32_t c = 0; c < cols; ++c) bh[c] = cpu::float_to_half(bias[c]);
      bool half = t == GemmType::kF16;
      void* py = half ? static_cast<void*>(yh.data()) : static_cast<void*>(y.data());
      const void* pb =
          half ? static_cast<const void*>(bh.data()) : static_cast<const void*>(bias.data());
      std::string error = emu::launch(config_of(plan), [&] {
        if (half) {
          bias_act_f16(py, pb, rows, cols, relu);
        } else {
          bias_act_f32(py, pb, rows, cols, relu);
        }
      });
      ASSERT_EQ(error, "");
      for (uint32_t i = 0; i < rows * cols; ++i) {
        float x = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.25f + bias[i % cols];
        if (relu && x < 0) x = 0;
        float got = half ? cpu::half_to_float(yh[i]) : y[i];
        ASSERT_EQ(got, x) << i << (relu ? " relu" : "");  // exact: quarters and halves
      }
    }
  }
}

}  // namespace
}  // namespace nvhcq::kernels
