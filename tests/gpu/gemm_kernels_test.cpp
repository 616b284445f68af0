// nvhcq's GEMM kernels (gemm_f32.cu, gemm_mma.cu, gemm_wgmma.cu on sm_90) on a real GPU through
// both backends, against float64 references: odd shapes (1x1x1, 17x33x65, 127x129x255, 1000^3),
// every tile configuration with edge tiles, unaligned matrices through the generic loaders. C is
// poisoned (NaN) and fenced by guard elements that must survive. Skips without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "cpu/half.h"
#include "cuda/cuda_accelerator.h"
#include "kernels/gemm_plan.h"
#include "support/gpu_env.h"

namespace nvhcq::kernels {
namespace {

constexpr size_t kGuardBytes = 64;  // before and after C; keeps C 16-byte aligned

float to_value(GemmType t, const uint8_t* p) {
  if (t == GemmType::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return t == GemmType::kF16 ? cpu::half_to_float(h) : cpu::bf16_to_float(h);
}

void from_value(GemmType t, float v, uint8_t* p) {
  if (t == GemmType::kF32) {
    std::memcpy(p, &v, 4);
    return;
  }
  uint16_t h = t == GemmType::kF16 ? cpu::float_to_half(v) : cpu::float_to_bf16(v);
  std::memcpy(p, &h, 2);
}

struct Inputs {
  std::vector<uint8_t> a, b;  // device bytes
  std::vector<double> ref;    // float64 C
};

// Inputs and reference per (type, m, n, k), shared by both backends' runs.
const Inputs& inputs_for(GemmType t, uint32_t m, uint32_t n, uint32_t k) {
  static std::map<std::tuple<int, uint32_t, uint32_t, uint32_t>, Inputs> cache;
  auto key = std::make_tuple(static_cast<int>(t), m, n, k);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const size_t es = gemm_element_bytes(t);
  Inputs in;
  std::mt19937 rng(m * 31 + n * 17 + k);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<double> a(size_t{m} * k), b(size_t{k} * n);
  in.a.resize(a.size() * es);
  in.b.resize(b.size() * es);
  for (size_t i = 0; i < a.size(); ++i) {
    from_value(t, dist(rng), &in.a[i * es]);
    a[i] = to_value(t, &in.a[i * es]);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    from_value(t, dist(rng), &in.b[i * es]);
    b[i] = to_value(t, &in.b[i * es]);
  }
  in.ref.assign(size_t{m} * n, 0.0);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      double av = a[size_t{i} * k + kk];
      const double* brow = &b[size_t{kk} * n];
      double* crow = &in.ref[size_t{i} * n];
      for (uint32_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
  return cache.emplace(key, std::move(in)).first->second;
}

class GemmKernelsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NVHCQ_REQUIRE_RM_GPU();
    if (GetParam() == "cuda") NVHCQ_REQUIRE_CUDA();
    if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed";
    acc = cuda::open_accelerator(GetParam());
  }

  const gpu::Kernel& kernel(const KernelLaunch& l) {
    auto it = kernels_.find(l.kernel);
    if (it != kernels_.end()) return *it->second;
    if (!cubins_.count(l.file)) {
      compile::CompileOptions o;
      o.arch = acc->arch() + l.arch_suffix;
      cubins_[l.file] = compile::compile_embedded(l.file, o).cubin;
    }
    return *kernels_.emplace(l.kernel, acc->load(cubins_[l.file], l.kernel)).first->second;
  }

  // Runs C = A*B with A and B placed `a_offset` bytes into their buffers
  // (nonzero: not 16-byte aligned) and checks C and its guards.
  void run(GemmType t, uint32_t m, uint32_t n, uint32_t k, const std::string& variant = "",
           size_t a_offset = 0) {
    SCOPED_TRACE(std::string(gemm_type_name(t)) + " " + std::to_string(m) + "x" +
                 std::to_string(n) + "x" + std::to_string(k) + " " +
                 (variant.empty() ? "auto" : variant) + " offset " + std::to_string(a_offset));
    const size_t es = gemm_element_bytes(t);
    const Inputs& in = inputs_for(t, m, n, k);
    KernelLaunch plan =
        plan_gemm(GemmProblem{t, m, n, k, a_offset == 0, acc->arch()}, acc->sm_count(), variant);
    auto a = acc->alloc(in.a.size() + a_offset), b = acc->alloc(in.b.size() + a_offset);
    const size_t c_bytes = size_t{m} * n * es;
    auto c = acc->alloc(c_bytes + 2 * kGuardBytes);
    acc->upload(*a, a_offset, in.a.data(), in.a.size());
    acc->upload(*b, a_offset, in.b.data(), in.b.size());
    std::vector<uint8_t> fill(c_bytes + 2 * kGuardBytes, 0x77);
    std::memset(fill.data() + kGuardBytes, 0xff, c_bytes);  // NaN inside, a pattern outside
    acc->upload(*c, 0, fill.data(), fill.size());

    gpu::KernelArgs args;
    args.ptr(c->va() + kGuardBytes).ptr(a->va() + a_offset).ptr(b->va() + a_offset);
    args.add(static_cast<int32_t>(m)).add(static_cast<int32_t>(n)).add(static_cast<int32_t>(k));
    gpu::LaunchDims d;
    for (int i = 0; i < 3; ++i) {
      d.grid[i] = plan.grid[i];
      d.block[i] = plan.block[i];
    }
    d.dynamic_shared_bytes = plan.shared_bytes;
    acc->launch(kernel(plan), args, d);
    acc->synchronize();

    std::vector<uint8_t> out(fill.size());
    acc->download(out.data(), *c, 0, out.size());
    for (size_t i = 0; i < kGuardBytes; ++i) {
      ASSERT_EQ(out[i], 0x77) << plan.kernel << " wrote before C";
      ASSERT_EQ(out[kGuardBytes + c_bytes + i], 0x77) << plan.kernel << " wrote after C";
    }
    double num = 0, den = 0;
    for (size_t i = 0; i < in.ref.size(); ++i) {
      double g = to_value(t, &out[kGuardBytes + i * es]);
      ASSERT_TRUE(std::isfinite(g))
          << plan.kernel << ": C[" << i / n << "][" << i % n << "] not written";
      num += (g - in.ref[i]) * (g - in.ref[i]);
      den += in.ref[i] * in.ref[i];
    }
    double err = std::sqrt(num / (den > 0 ? den : 1));
    double tol = t == GemmType::kF32   ? 1e-6 + 4e-7 * std::sqrt(double(k))
                 : t == GemmType::kF16 ? 5e-3
                                       : 1e-2;
    EXPECT_LT(err, tol) << plan.kernel;
  }

  std::unique_ptr<gpu::Accelerator> acc;
  std::map<std::string, std::vector<uint8_t>> cubins_;
  std::map<std::string, std::unique_ptr<gpu::Kernel>> kernels_;
};

TEST_P(GemmKernelsTest, OddShapesEveryType) {
  for (GemmType t : {GemmType::kF32, GemmType::kF16, GemmType::kBF16}) {
    run(t, 1, 1, 1);
    run(t, 17, 33, 65);
    run(t, 127, 129, 255);
    run(t, 1000, 1000, 1000);
  }
}

TEST_P(GemmKernelsTest, EveryTileConfigurationWithEdgeTiles) {
  for (GemmType t : {GemmType::kF16, GemmType::kBF16}) {
    // K and N multiples of 8, edges everywhere; on sm_90 the wgmma kernel too.
    for (const auto& v : gemm_variants(t, acc->arch())) run(t, 300, 264, 200, v);
  }
  for (const auto& v : gemm_variants(GemmType::kF32)) run(GemmType::kF32, 300, 260, 196, v);
}

TEST_P(GemmKernelsTest, WarpgroupKernelOnHopperAtSeveralShapes) {
  if (!wgmma_applies(GemmProblem{GemmType::kBF16, 64, 64, 64, true, acc->arch()})) {
    GTEST_SKIP() << "the wgmma kernel is for sm_90; this GPU is " << acc->arch();
  }
  for (GemmType t : {GemmType::kF16, GemmType::kBF16}) {
    run(t, 128, 256, 64, kWgmmaVariant);      // one tile, one k-tile
    run(t, 1000, 1000, 1000, kWgmmaVariant);  // edges in every dimension, 16 k-tiles
    run(t, 8, 520, 1032, kWgmmaVariant);      // a thin M
  }
}

TEST_P(GemmKernelsTest, UnalignedMatricesTakeTheGenericLoaders) {
  run(GemmType::kF16, 64, 64, 64, "", 2);  // A and B 2 bytes off 16-byte alignment
  run(GemmType::kBF16, 70, 72, 40, "", 6);
  run(GemmType::kF32, 64, 64, 64, "", 4);
}

INSTANTIATE_TEST_SUITE_P(Backends, GemmKernelsTest, ::testing::Values("nv", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvhcq::kernels
