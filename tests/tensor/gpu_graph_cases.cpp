// Whole graphs on a GPU backend compared with the CPU backend: the fusion
// planner's edge cases (shared subexpressions, deep chains, epilogues through
// views, padded views of fused nodes), the vector/tail split of elementwise
// kernels at every alignment, long and wide reductions, data-dependent index
// errors, large f16/bf16 matmuls (tensor cores on "nv"/"cuda") and Jit replays
// that skip work depending only on weights. Instantiated on "emu" in test_tensor
// and on "nv" and "cuda" in test_gpu (tensor_gpu_instances.cpp,
// tests/gpu/tensor_jit_gpu_test.cpp).
#include "tensor/gpu_graph_cases.h"

#include <cmath>

#include "base/error.h"
#include "tensor/jit.h"
#include "tensor/nn.h"

namespace nvhcq::tensor {
namespace {

namespace nn = tensor::nn;

// The same graph built on the CPU and on the device under test.
using Graph = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

::testing::AssertionResult same(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                                double rtol, double atol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " outputs, expected " << want.size();
  for (size_t o = 0; o < got.size(); ++o) {
    if (got[o].shape() != want[o].shape() || got[o].dtype() != want[o].dtype()) {
      return ::testing::AssertionFailure()
             << "output " << o << ": " << shape_str(got[o].shape()) << " "
             << dtype_name(got[o].dtype()) << ", expected " << shape_str(want[o].shape()) << " "
             << dtype_name(want[o].dtype());
    }
    const std::vector<double> g = got[o].to_vector<double>(), w = want[o].to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) {
      const bool ok = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                      std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
      if (!ok) {
        return ::testing::AssertionFailure()
               << "output " << o << " element " << i << " of " << g.size() << ": got " << g[i]
               << ", the CPU backend gives " << w[i];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

void GpuGraphs::SetUp() {
  const std::string why = test_device_unusable(GetParam());
  if (!why.empty()) GTEST_SKIP() << why;
  device = GetParam();
}

::testing::AssertionResult GpuGraphs::matches_cpu(
    const std::vector<Tensor>& host_inputs,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& graph, double rtol,
    double atol) {
  std::vector<Tensor> dev;
  for (const auto& t : host_inputs) dev.push_back(t.to(device));
  return same(graph(dev), graph(host_inputs), rtol, atol);
}

TEST_P(GpuGraphs, SharedAndDeepSubexpressions) {
  Tensor x = Tensor::randn({13, 17}, 1), y = Tensor::randn({17}, 2);
  EXPECT_TRUE(matches_cpu(
      {x, y},
      [](const std::vector<Tensor>& in) {
        Tensor cheap = in[0] * 2.0 + in[1];
        Tensor costly = in[0];
        for (int i = 0; i < 5; ++i) costly = (costly * 0.9).tanh().exp();
        Tensor deep = in[0];
        for (int i = 0; i < 600; ++i) deep = deep * 0.999 + 0.001;
        return std::vector<Tensor>{cheap + 1.0, cheap.exp(), costly - cheap, costly * 3.0, deep};
      },
      1e-5, 1e-6));
}

TEST_P(GpuGraphs, EpiloguesAndViewsOfFusedNodes) {
  Tensor x = Tensor::randn({6, 7, 9}, 3);
  EXPECT_TRUE(matches_cpu(
      {x},
      [](const std::vector<Tensor>& in) {
        const Tensor& a = in[0];
        return std::vector<Tensor>{
            a.mean({2}).sqrt().abs(),  // epilogue through a reshape
            a.var({0, 2}, 1, true),    // two epilogues
            a.exp().pad({{1, 2}, {0, 0}, {3, 1}}, PadMode::kConstant, -2.0),
            a.sin().flip({1, 2}).slice(2, 1, std::nullopt, 3),
            Tensor::cat({a.exp(), a.flip({0}).sigmoid(), a.permute({1, 0, 2}).reshape({6, 7, 9})},
                        1),
            a.transpose(0, 2).argmax(1),
            a.logsumexp({1}),
            a.softmax(0)};
      },
      2e-5, 1e-6));
}

TEST_P(GpuGraphs, VectorAndTailPathsAtEveryAlignment) {
  for (int64_t n : {7, 17, 4097}) {
    Tensor f = Tensor::randn({n + 5}, 10 + n);
    Tensor i = Tensor::randint(-1000, 1000, {n + 5}, 20 + n, DType::kI64);
    EXPECT_TRUE(matches_cpu(
        {f, i},
        [n](const std::vector<Tensor>& in) {
          std::vector<Tensor> outs;
          for (int64_t off : {1, 4}) {  // unaligned; aligned but not at the start
            Tensor a = in[0].slice(0, off, off + n), b = in[1].slice(0, off, off + n);
            outs.push_back(a * 3.0 + 1.0);                          // f32, V = 4
            outs.push_back(a.cast(DType::kF16) * 2.0);              // f16 out, f32 in
            outs.push_back(a.gt(0.0));                              // bool out
            outs.push_back(b.cast(DType::kI8) * 3);                 // i8, V = 8 (i64 in)
            outs.push_back(b + b.flip({0}));                        // i64, V = 2
            outs.push_back(a.cast(DType::kBF16).cast(DType::kU8));  // saturating
          }
          return outs;
        },
        1e-6, 1e-6))
        << "n = " << n;
  }
}

TEST_P(GpuGraphs, LongAndWideReductions) {
  Tensor row = Tensor::randn({2, 300001}, 4), cols = Tensor::randn({3000, 40}, 5),
         mid = Tensor::randn({64, 500}, 6);
  EXPECT_TRUE(matches_cpu(
      {row, cols, mid},
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0].sum({1}),
                                   in[0].max({1}),
                                   in[0].argmin(1),
                                   in[1].sum({0}),
                                   in[1].mean({0}),
                                   in[2].prod({1}).abs().log(),
                                   in[2].cast(DType::kF16).sum({1}),
                                   in[1].cast(DType::kI32).sum()};
      },
      1e-4, 1e-3));
}

TEST_P(GpuGraphs, IndexOutOfRangeIsRaisedWhenDataIsRead) {
  Tensor x = Tensor::randn({4, 5}, 7).to(device);
  Tensor bad = Tensor::from_vector<int64_t>({0, 1, 7, 2}, {4, 1}, DType::kI64, device);
  try {
    (void)x.gather(1, bad).to_vector<float>();
    ADD_FAILURE() << "an index of 7 into an axis of 5 did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gather"), std::string::npos) << e.what();
  }
  // The flag is cleared: the next graph runs normally.
  Tensor good = Tensor::from_vector<int64_t>({0, 1, 4, 2}, {4, 1}, DType::kI64, device);
  EXPECT_EQ(x.gather(1, good).to_vector<float>().size(), 4u);
  Tensor src = Tensor::ones({1, 3}, DType::kF32, device);
  EXPECT_THROW((void)Tensor::zeros({2, 3}, DType::kF32, device)
                   .scatter_add(0, Tensor::full({1, 3}, 5, DType::kI64, device), src)
                   .to_vector<float>(),
               Error);
}

TEST_P(GpuGraphs, HalfPrecisionMatmulsAgainstTheCpu) {
  // Large enough for the tensor-core GEMM (the emulator runs a reference kernel in
  // its place); the offset case is smaller there and takes the strided kernel.
  const bool big = device != "emu";
  const int64_t m = big ? 384 : 128, k = big ? 1024 : 256, n = big ? 768 : 128;
  for (DType t : {DType::kF16, DType::kBF16}) {
    Tensor x = (Tensor::randn({m, k}, 8) * 0.5).cast(t),
           w = (Tensor::randn({n, k}, 9) * 0.05).cast(t);
    Tensor b = Tensor::randn({k, n}, 10).cast(t).mul(0.05), bias = Tensor::randn({n}, 11).cast(t);
    Tensor xb = (Tensor::randn({2, m / 2, k}, 12) * 0.5).cast(t);
    const double tol = t == DType::kF16 ? 4e-3 : 3e-2;
    EXPECT_TRUE(matches_cpu(
        {x, w, b, bias, xb},
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{
              nn::linear(in[0], in[1], in[3]),                        // B = W^T: a planned copy
              in[0].matmul(in[2]),                                    // B row-major as is
              in[4].matmul(in[2]),                                    // batch folded into M
              in[0].slice(0, 8, std::nullopt).matmul(in[2]).relu()};  // A at an offset
        },
        tol, tol))
        << dtype_name(t);
  }
}

TEST_P(GpuGraphs, JitReplaysSkipWorkOnWeightsOnly) {
  Tensor w = Tensor::randn({24, 32}, 13).to(device);
  Jit f([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].matmul(w.exp().t()) + 1.0};
  });
  for (int i = 0; i < 4; ++i) {
    Tensor x = Tensor::randn({5, 32}, 100 + i);
    std::vector<float> want = (x.matmul(w.to("cpu").exp().t()) + 1.0).to_vector<float>();
    std::vector<float> got = f({x.to(device)})[0].to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); ++j)
      ASSERT_NEAR(got[j], want[j], 1e-4 * (1 + std::fabs(want[j]))) << "call " << i;
  }
  // exp(w) ran once at capture; a replay runs the matmul and the add.
  EXPECT_EQ(f.captured_launches(), 2u);
  EXPECT_EQ(f.replays(), 2u);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuGraphs);

}  // namespace nvhcq::tensor
