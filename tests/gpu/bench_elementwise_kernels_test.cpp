// The elementwise kernels (elementwise.cu) on a real GPU through both backends,
// against float64 references: every op and type, lengths with vector tails,
// misaligned arrays (the element-at-a-time path), grids that wrap, and the
// MLP's bias + relu kernel. Outputs are poisoned and fenced by guard bytes.
// Skips without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "cpu/half.h"
#include "cuda/cuda_accelerator.h"
#include "kernels/gemm_plan.h"
#include "support/gpu_env.h"

namespace nvhcq::kernels {
namespace {

constexpr size_t kGuard = 64;

gpu::LaunchDims dims(const KernelLaunch& l) {
  gpu::LaunchDims d;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = l.grid[i];
    d.block[i] = l.block[i];
  }
  d.dynamic_shared_bytes = l.shared_bytes;
  return d;
}

class ElementwiseKernelsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NVHCQ_REQUIRE_RM_GPU();
    if (GetParam() == "cuda") NVHCQ_REQUIRE_CUDA();
    if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed";
    acc = cuda::open_accelerator(GetParam());
    compile::CompileOptions o;
    o.arch = acc->arch();
    cubin = compile::compile_embedded("elementwise.cu", o).cubin;
  }

  // op over n elements placed `misalign` elements into their buffers; `sm_count`
  // shapes the grid (small: the grid-stride loop wraps many times).
  void run(ElementwiseOp op, GemmType t, uint64_t n, size_t misalign, uint32_t sm_count) {
    SCOPED_TRACE(std::string(elementwise_op_name(op)) + " " + gemm_type_name(t) +
                 " n=" + std::to_string(n) + " misalign=" + std::to_string(misalign) +
                 " sms=" + std::to_string(sm_count));
    const bool half = t == GemmType::kF16;
    const size_t es = half ? 2 : 4;
    KernelLaunch plan = plan_elementwise(op, t, n, sm_count);
    auto k = acc->load(cubin, plan.kernel);
    std::mt19937 rng(static_cast<uint32_t>(n + misalign));
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    std::vector<uint8_t> a(n * es), b(n * es);
    std::vector<double> av(n), bv(n);
    for (uint64_t i = 0; i < n; ++i) {
      float x = dist(rng), y = dist(rng);
      if (half) {
        uint16_t hx = cpu::float_to_half(x), hy = cpu::float_to_half(y);
        std::memcpy(&a[i * es], &hx, 2);
        std::memcpy(&b[i * es], &hy, 2);
        av[i] = cpu::half_to_float(hx);
        bv[i] = cpu::half_to_float(hy);
      } else {
        std::memcpy(&a[i * es], &x, 4);
        std::memcpy(&b[i * es], &y, 4);
        av[i] = x;
        bv[i] = y;
      }
    }
    const size_t off = kGuard + misalign * es;
    auto da = acc->alloc(n * es + 2 * kGuard), db = acc->alloc(n * es + 2 * kGuard);
    auto dout = acc->alloc(n * es + 2 * kGuard);
    acc->upload(*da, off, a.data(), a.size());
    acc->upload(*db, off, b.data(), b.size());
    std::vector<uint8_t> fill(n * es + 2 * kGuard, 0x3c);
    std::memset(fill.data() + off, 0xff, n * es);
    acc->upload(*dout, 0, fill.data(), fill.size());
    gpu::KernelArgs args;
    args.ptr(dout->va() + off).ptr(da->va() + off);
    if (elementwise_inputs(op) == 2) args.ptr(db->va() + off);
    args.add(static_cast<uint64_t>(n));
    acc->launch(*k, args, dims(plan));
    acc->synchronize();
    std::vector<uint8_t> out(fill.size());
    acc->download(out.data(), *dout, 0, out.size());
    for (size_t i = 0; i < off; ++i) ASSERT_EQ(out[i], 0x3c) << "write before the output";
    for (size_t i = off + n * es; i < out.size(); ++i)
      ASSERT_EQ(out[i], 0x3c) << "write after the output";
    for (uint64_t i = 0; i < n; ++i) {
      double want = elementwise_reference(op, av[i], bv[i]);
      double got;
      if (half) {
        uint16_t h;
        std::memcpy(&h, &out[off + i * es], 2);
        got = cpu::half_to_float(h);
        ASSERT_NEAR(got, want, std::fabs(want) * 1.5e-3 + 1e-7) << i;
      } else {
        float f;
        std::memcpy(&f, &out[off + i * es], 4);
        got = f;
        ASSERT_NEAR(got, want, std::fabs(want) * 1e-6 + 1e-30) << i;
      }
    }
  }

  std::unique_ptr<gpu::Accelerator> acc;
  std::vector<uint8_t> cubin;
};

TEST_P(ElementwiseKernelsTest, EveryOpAndTypeWithTailsMisalignmentAndWrappingGrids) {
  for (GemmType t : {GemmType::kF32, GemmType::kF16}) {
    for (ElementwiseOp op :
         {ElementwiseOp::kAdd, ElementwiseOp::kMul, ElementwiseOp::kExp, ElementwiseOp::kRelu}) {
      run(op, t, 1, 0, acc->sm_count());
      run(op, t, 1000003, 0, acc->sm_count());  // vectors + a tail
      run(op, t, 100003, 1, acc->sm_count());   // misaligned: one element at a time
      run(op, t, 65539, 0, 1);                  // 8 CTAs: the two-vector loop wraps
    }
  }
}

TEST_P(ElementwiseKernelsTest, BiasActAddsPerColumnAndClamps) {
  const uint32_t rows = 37, cols = 129;
  for (GemmType t : {GemmType::kF32, GemmType::kF16}) {
    for (uint32_t relu : {0u, 1u}) {
      KernelLaunch plan = plan_bias_act(t, rows, cols, acc->sm_count());
      auto k = acc->load(cubin, plan.kernel);
      const size_t es = t == GemmType::kF16 ? 2 : 4;
      std::vector<uint8_t> y(size_t{rows} * cols * es), bias(cols * es);
      auto put = [&](std::vector<uint8_t>& v, size_t i, float f) {
        if (es == 2) {
          uint16_t h = cpu::float_to_half(f);
          std::memcpy(&v[i * 2], &h, 2);
        } else {
          std::memcpy(&v[i * 4], &f, 4);
        }
      };
      auto yv = [](size_t i) { return static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f; };
      auto bv = [](size_t c) { return static_cast<float>(static_cast<int>(c % 5) - 2) * 0.5f; };
      for (size_t i = 0; i < size_t{rows} * cols; ++i) put(y, i, yv(i));
      for (size_t c = 0; c < cols; ++c) put(bias, c, bv(c));
      auto dy = acc->alloc(y.size()), db = acc->alloc(bias.size());
      acc->upload(*dy, 0, y.data(), y.size());
      acc->upload(*db, 0, bias.data(), bias.size());
      acc->launch(*k, gpu::KernelArgs().ptr(dy->va()).ptr(db->va()).add(rows).add(cols).add(relu),
                  dims(plan));
      acc->synchronize();
      acc->download(y.data(), *dy, 0, y.size());
      for (size_t i = 0; i < size_t{rows} * cols; ++i) {
        float want = yv(i) + bv(i % cols);
        if (relu && want < 0) want = 0;
        float got;
        if (es == 2) {
          uint16_t h;
          std::memcpy(&h, &y[i * 2], 2);
          got = cpu::half_to_float(h);
        } else {
          std::memcpy(&got, &y[i * 4], 4);
        }
        ASSERT_EQ(got, want) << i << (relu ? " relu" : "");  // exact: quarters and halves
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ElementwiseKernelsTest, ::testing::Values("nv", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvhcq::kernels
