// The GPU backend's scheduler and code generator, checked without a GPU: how
// many kernels a graph becomes (what is fused, what gets a buffer), what the
// generated CUDA C looks like (vector accesses, index arithmetic, per-node
// rounding, 32- or 64-bit indices), and that NVRTC compiles every kernel of a
// representative set of graphs for sm_90 (skipped when NVRTC is not installed).
// Graphs are built on "cpu" tensors: planning and code generation do not depend
// on the device.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "kernels/embedded.h"
#include "tensor/gpu/fused_kernels.h"
#include "tensor/gpu/fusion_plan.h"
#include "tensor/gpu/library_kernels.h"
#include "tensor/nn.h"
#include "tensor/realize.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

namespace nn = tensor::nn;

struct Lowered {
  FusionPlan plan;
  std::vector<LaunchSpec> specs;
  std::vector<PlannedKernel::Kind> kinds;
};

// Plans the graph behind `outs` as GpuBackend::execute does and generates every kernel.
Lowered lower(const std::vector<Tensor>& outs, KernelTarget target = {}) {
  std::vector<NodePtr> bases;
  for (const auto& t : outs) bases.push_back(base_of(t.node()));
  Schedule s = build_schedule(bases);
  Lowered l{plan_fusion(s, target), {}, {}};
  for (const auto& k : l.plan.kernels) {
    l.kinds.push_back(k.kind);
    if (numel(k.root->shape) > 0) l.specs.push_back(lower_kernel(k, l.plan, target));
  }
  return l;
}

size_t kernels(const std::vector<Tensor>& outs) {
  return lower(outs).plan.kernels.size();
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

Tensor x13() {
  return Tensor::randn({13, 17}, 1);
}

TEST(FusionPlan, ElementwiseChainIsOneKernel) {
  Tensor x = x13(), y = Tensor::randn({17}, 2);
  Tensor out = ((x * 2.0 + 1.0).relu() * y - 3.0).exp().sigmoid();
  Lowered l = lower({out});
  ASSERT_EQ(l.plan.kernels.size(), 1u);
  EXPECT_EQ(l.kinds[0], PlannedKernel::Kind::kElementwise);
  ASSERT_EQ(l.specs[0].args.size(), 3u) << "output, x and the broadcast y";
  EXPECT_TRUE(contains(l.specs[0].source, "expf(")) << l.specs[0].source;
}

TEST(FusionPlan, SoftmaxIsThreeKernelsAndMeanIsOne) {
  Tensor x = x13();
  Lowered sm = lower({x.softmax(-1)});
  ASSERT_EQ(sm.plan.kernels.size(), 3u);
  EXPECT_EQ(sm.kinds[0], PlannedKernel::Kind::kReduce);  // max
  EXPECT_EQ(sm.kinds[1], PlannedKernel::Kind::kReduce);  // sum(exp(x - max))
  EXPECT_EQ(sm.kinds[2], PlannedKernel::Kind::kElementwise);
  // mean = sum / n: the division is the reduction's epilogue.
  Lowered mean = lower({x.mean({1})});
  ASSERT_EQ(mean.plan.kernels.size(), 1u);
  EXPECT_EQ(mean.kinds[0], PlannedKernel::Kind::kReduce);
  EXPECT_TRUE(contains(mean.specs[0].what, "reduction")) << mean.specs[0].what;
  EXPECT_EQ(kernels({x.var({1})}), 2u) << "mean, then the sum of squares with its division";
  EXPECT_EQ(kernels({x.std({0})}), 2u) << "sqrt joins the second epilogue";
  // mean, var (which takes its own mean: the graph has no common-subexpression
  // elimination), normalize-scale-shift.
  EXPECT_EQ(kernels({nn::layer_norm(x, {17})}), 4u);
  // A reduction broadcast back to the input shape is no epilogue.
  EXPECT_EQ(kernels({x.sum({1}, true) + x}), 2u);
}

TEST(FusionPlan, CheapSharedNodesAreRecomputedCostlyOnesMaterialized) {
  Tensor x = x13();
  Tensor cheap = x * 2.0;
  EXPECT_EQ(lower({cheap + 1.0, cheap - 1.0}).plan.kernels.size(), 2u);
  Tensor costly = x;
  for (int i = 0; i < 6; ++i) costly = (costly * 1.5).exp().log();
  Lowered l = lower({costly + 1.0, costly - 1.0});
  EXPECT_EQ(l.plan.kernels.size(), 3u) << "the shared 12-op chain gets its own buffer";
  // Broadcasting a costly node through an expanding view also materializes it.
  Tensor row = Tensor::randn({17}, 3);
  for (int i = 0; i < 6; ++i) row = (row * 1.5).exp().log();
  EXPECT_EQ(kernels({row.reshape({1, 17}).expand({13, 17}) + x}), 2u);
}

TEST(FusionPlan, VeryDeepChainsAreCut) {
  Tensor a = Tensor::randn({64}, 1);
  for (int i = 0; i < 600; ++i) a = a + 1.0;
  Lowered l = lower({a});
  EXPECT_GE(l.plan.kernels.size(), 3u);
  EXPECT_LE(l.plan.kernels.size(), 4u);
}

TEST(FusionPlan, LibraryOperands) {
  Tensor a = Tensor::randn({8, 16}, 1), b = Tensor::randn({12, 16}, 2);
  // A transposed realized operand is read through its strides.
  Lowered t = lower({a.matmul(b.t())});
  ASSERT_EQ(t.plan.kernels.size(), 1u);
  EXPECT_EQ(t.kinds[0], PlannedKernel::Kind::kLibrary);
  EXPECT_EQ(t.specs[0].entry, "nvt_matmul_f32");
  // A fused operand gets a buffer; a padded view a contiguous copy.
  EXPECT_EQ(kernels({a.exp().matmul(b.t())}), 2u);
  Lowered p = lower({a.pad({{1, 1}}).matmul(b.t())});
  EXPECT_EQ(p.plan.kernels.size(), 2u);
  EXPECT_EQ(p.plan.synthetic.size(), 1u);
  Tensor img = Tensor::randn({1, 2, 6, 6}, 3), w = Tensor::randn({3, 2, 3, 3}, 4);
  EXPECT_EQ(kernels({nn::conv2d(img * 2.0, w)}), 2u);
}

TEST(FusionPlan, LargeHalfMatmulsGoToTensorCores) {
  KernelTarget hopper;
  hopper.tensor_core_gemm = true;
  auto int_arg = [](const LaunchSpec& s, size_t i) {
    int32_t v;
    std::memcpy(&v, s.args.at(i).bytes.data(), 4);
    return v;
  };
  // A linear layer: the weight's transpose is copied once, then one GEMM and the bias.
  Tensor x = Tensor::randn({256, 512}, 1, DType::kF16),
         w = Tensor::randn({384, 512}, 2, DType::kF16);
  Lowered lin = lower({nn::linear(x, w, Tensor::randn({384}, 3, DType::kF16))}, hopper);
  ASSERT_EQ(lin.specs.size(), 3u);
  EXPECT_EQ(lin.plan.synthetic.size(), 1u);
  const LaunchSpec& g = lin.specs[1];
  EXPECT_EQ(g.file, "gemm_mma.cu");
  EXPECT_EQ(g.entry.rfind("gemm_mma_f16_", 0), 0u) << g.entry;
  ASSERT_EQ(g.args.size(), 6u);
  EXPECT_EQ(int_arg(g, 3), 256);
  EXPECT_EQ(int_arg(g, 4), 384);
  EXPECT_EQ(int_arg(g, 5), 512);
  EXPECT_GT(g.dims.dynamic_shared_bytes, 0u);
  // Batch axes fold into M when B is shared; a row-major B needs no copy.
  Tensor xb = Tensor::randn({2, 128, 512}, 4, DType::kBF16),
         b = Tensor::randn({512, 256}, 5, DType::kBF16);
  Lowered folded = lower({xb.matmul(b)}, hopper);
  ASSERT_EQ(folded.specs.size(), 1u);
  EXPECT_EQ(folded.specs[0].entry.rfind("gemm_mma_bf16_", 0), 0u);
  EXPECT_EQ(int_arg(folded.specs[0], 3), 256);
  // Not for: a B per batch, f32, small problems, or a target without tensor cores.
  EXPECT_EQ(
      lower({xb.matmul(Tensor::randn({2, 512, 256}, 6, DType::kBF16))}, hopper).specs[0].entry,
      "nvt_matmul_bf16");
  EXPECT_EQ(lower({x.cast(DType::kF32).matmul(w.cast(DType::kF32).t())}, hopper).specs.back().entry,
            "nvt_matmul_f32");
  EXPECT_EQ(lower({x.slice(0, 0, 8).matmul(w.t())}, hopper).specs[0].entry, "nvt_matmul_f16");
  EXPECT_EQ(lower({xb.matmul(b)}).specs[0].entry, "nvt_matmul_bf16");
}

TEST(FusionPlan, IndexOpsComputeTheirFusedSources) {
  Tensor x = x13();
  Tensor idx = Tensor::randint(0, 17, {13, 4}, 5);
  Lowered g = lower({x.exp().gather(1, idx)});
  ASSERT_EQ(g.plan.kernels.size(), 1u);
  EXPECT_TRUE(contains(g.specs[0].source, "expf(")) << "exp is computed inside the gather kernel";
  EXPECT_TRUE(contains(g.specs[0].source, "nvt_raise(err, 1u)"));
  EXPECT_EQ(g.specs[0].args.back().kind, ArgSpec::Kind::kErrorFlag);
  Lowered c = lower({(x * 2.0).cumsum(0)});
  ASSERT_EQ(c.plan.kernels.size(), 1u);
  EXPECT_EQ(c.kinds[0], PlannedKernel::Kind::kScan);
  EXPECT_TRUE(contains(c.specs[0].source, "double acc"))
      << "float cumsum accumulates in f64 as on the CPU";
  EXPECT_EQ(kernels({Tensor::cat({x.exp(), x.flip({0}) * 3.0}, 1)}), 1u);
}

TEST(CodeGen, ContiguousAccessesAreVectorized) {
  Tensor x = Tensor::randn({4096}, 1), y = Tensor::randn({4096}, 2);
  Lowered f32 = lower({x * y + 1.0});
  const std::string& s = f32.specs[0].source;
  EXPECT_TRUE(contains(s, "nvt_load_vec<float, 4>(p1 + i0 + 0)")) << s;
  EXPECT_TRUE(contains(s, "nvt_load_vec<float, 4>(p2 + i0 + 0)")) << s;
  EXPECT_TRUE(contains(s, "nvt_store_vec<float, 4>(p0 + i0, out)")) << s;
  EXPECT_FALSE(contains(s, "i0 + 4 <= 4096")) << "no tail when the size divides";
  // f16 stores 8 elements at once; a comparison stores 4 bools (the f32 loads set the width).
  Lowered f16 = lower({(x.cast(DType::kF16) * 2.0)});
  EXPECT_TRUE(contains(f16.specs[0].source, "nvt_store_vec<unsigned short, 4>"))
      << "f32 input limits f16 to 4";
  Tensor h = Tensor::randn({4097}, 3, DType::kF16);
  Lowered half = lower({h * 2.0});
  EXPECT_TRUE(contains(half.specs[0].source, "nvt_load_vec<unsigned short, 8>"))
      << half.specs[0].source;
  EXPECT_TRUE(contains(half.specs[0].source, "if (i0 + 8 <= 4097)"))
      << "the last partial vector takes the tail path";
  Lowered cmp = lower({x.gt(y)});
  EXPECT_TRUE(contains(cmp.specs[0].source, "nvt_store_vec<unsigned char, 4>"));
  // A transposed operand is read element by element with its strides.
  Tensor m = Tensor::randn({64, 48}, 4);
  Lowered tr = lower({m.t() + 1.0});
  EXPECT_FALSE(contains(tr.specs[0].source, "nvt_load_vec")) << tr.specs[0].source;
  EXPECT_TRUE(contains(tr.specs[0].source, "* 48")) << tr.specs[0].source;
}

TEST(CodeGen, ViewsBecomeIndexArithmetic) {
  Tensor x = x13();
  // Padding: a range test, and a clamped offset so padding never reads out of bounds.
  Lowered p = lower({x.pad({{1, 2}, {0, 3}}, PadMode::kConstant, 7.0) + 0.5});
  const std::string& s = p.specs[0].source;
  EXPECT_TRUE(contains(s, ">= 1 &&")) << s;
  EXPECT_TRUE(contains(s, "< 14")) << s;
  EXPECT_TRUE(contains(s, "? (-17 +")) << s;
  EXPECT_TRUE(contains(s, "(0x1.cp+2f)")) << "the pad value 7" << s;
  // A flip reads backwards from the last row.
  Lowered f = lower({x.flip({0}) * 2.0});
  EXPECT_TRUE(contains(f.specs[0].source, "204 +")) << f.specs[0].source;
  EXPECT_TRUE(contains(f.specs[0].source, "* -17")) << f.specs[0].source;
}

TEST(CodeGen, NarrowDtypesRoundAfterEveryNode) {
  Tensor h = Tensor::randn({64}, 1, DType::kF16);
  Lowered l = lower({(h * 3.0 + 1.0).exp()});
  const std::string& s = l.specs[0].source;
  size_t rounds = 0;
  for (size_t at = s.find("nvt_h2f(nvt_f2h("); at != std::string::npos;
       at = s.find("nvt_h2f(nvt_f2h(", at + 1))
    ++rounds;
  EXPECT_GE(rounds, 3u * 8) << "mul, add and exp each round to f16 in each of the 8 vector lanes";
  Tensor i8 = Tensor::randint(-100, 100, {64}, 2, DType::kI8);
  EXPECT_TRUE(contains(lower({i8 * 3}).specs[0].source, "nvt_wrap_i8(nvt_mul("))
      << "int8 products wrap";
}

TEST(CodeGen, IndexWidthFollowsTheTensorSize) {
  EXPECT_TRUE(contains(lower({x13().exp()}).specs[0].source, "for (int v ="));
  Tensor huge = Tensor::zeros({int64_t{3} << 30});
  EXPECT_TRUE(contains(lower({(huge + 1.0).exp()}).specs[0].source, "for (long long v ="))
      << "3 Gi elements need 64-bit indices";
}

TEST(CodeGen, ReductionLanesFollowTheShape) {
  auto lanes = [](const Tensor& t) {
    const std::string s = lower({t}).specs[0].source;
    const size_t at = s.find("threadIdx.x % ");
    return s.substr(at + 14, s.find(';', at) - at - 14);
  };
  EXPECT_EQ(lanes(Tensor::randn({64, 500}, 1).sum({1})), "32") << "a warp per row";
  EXPECT_EQ(lanes(Tensor::randn({4, 100000}, 1).sum({1})), "256") << "a block per long row";
  EXPECT_EQ(lanes(Tensor::randn({300, 4096}, 1).sum({0})), "1") << "a thread per column";
  EXPECT_EQ(lanes(Tensor::randn({13, 5}, 1).sum({1})), "8");
}

TEST(CodeGen, EmptyMaxIsAnError) {
  Tensor x = Tensor::zeros({3, 0});
  Schedule s = build_schedule({base_of(x.sum({1}).node())});
  FusionPlan plan = plan_fusion(s);
  ASSERT_EQ(plan.kernels.size(), 1u);
  // A max over a zero-size axis cannot be built through the API; the generator refuses it too.
  auto r = make_node(Op::kReduce, DType::kF32, {3, 1}, "cpu", {x.node()});
  r->reduce_op = ReduceOp::kMax;
  r->axes = {1};
  FusionPlan p2 = plan_fusion(build_schedule({r}));
  EXPECT_THROW(generate_reduce(r.get(), r.get(), p2, KernelTarget{}), Error);
}

// NVRTC compiles every kernel of these graphs for sm_90.
TEST(CodeGen, NvrtcCompilesRepresentativeGraphs) {
  if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed";
  Tensor x = x13(), y = Tensor::randn({17}, 2);
  Tensor h = x.cast(DType::kF16), b = x.cast(DType::kBF16);
  Tensor i32 = Tensor::randint(-50, 50, {13, 17}, 3, DType::kI32);
  Tensor idx = Tensor::randint(0, 13, {5, 17}, 4);
  Tensor img = Tensor::randn({2, 4, 9, 9}, 5), w = Tensor::randn({6, 2, 3, 3}, 6);
  Tensor q = Tensor::randn({2, 5, 8}, 7), k = Tensor::randn({2, 6, 8}, 8);
  std::vector<std::vector<Tensor>> graphs = {
      {((x * 2.0 + y).exp() - 1.0).relu()},
      {x.softmax(-1), x.log_softmax(0)},
      {h.softmax(-1), b.var({0}), h.cast(DType::kI8)},
      {x.argmax(1), x.argmin(0), x.max(), x.sum(), x.prod({0})},
      {i32.bitwise_xor(i32.shl(2)).mod(7).pow(i32.abs().mod(3)),
       i32.gt(0).logical_xor(i32.lt(5)).any({1})},
      {x.pad({{1, 1}, {2, 0}}, PadMode::kReflect), Tensor::cat({x, x.flip({1})}, 0).triu(1)},
      {x.gather(0, idx), x.scatter_add(0, idx, x.slice(0, 0, 5) * 2.0), x.cumsum(1), i32.cumsum(0)},
      {x.matmul(y), h.matmul(h.t()), i32.cast(DType::kI8).matmul(i32.cast(DType::kI8).t())},
      {nn::conv2d(img, w, Tensor::randn({6}, 9), 2, 1, 1, 2),
       nn::conv_transpose2d(img, Tensor::randn({4, 3, 2, 2}, 10)), nn::max_pool2d(img, 3, 2, 1),
       nn::avg_pool2d(img, 2)},
      {nn::scaled_dot_product_attention(q, k, k, Tensor(), true), nn::layer_norm(x, {17}),
       x.erf().tanh().isnan()},
      {Tensor::zeros({int64_t{3} << 30}).add(1.0)},
  };
  compile::CompileOptions o;
  o.arch = "sm_90";
  std::vector<LaunchSpec> specs;
  for (const auto& g : graphs) {
    for (LaunchSpec& s : lower(g).specs) {
      bool dup = false;
      for (const auto& t : specs) dup = dup || (t.source == s.source);
      if (!dup) specs.push_back(std::move(s));
    }
  }
  LaunchSpec fill;  // the poison fill of GpuBackend::allocate
  fill.file = "tensor_fill.cu";
  fill.entry = "nvt_fill_u32";
  fill.source = std::string(kernels::embedded_source("tensor_fill.cu"));
  specs.push_back(fill);
  std::vector<std::string> errors(specs.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < specs.size(); i = next++) {
        try {
          compile::compile(specs[i].source, specs[i].file, o);
        } catch (const Error& e) {
          errors[i] = e.what();
        }
      }
    });
  }
  for (auto& t : workers) t.join();
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_TRUE(errors[i].empty())
        << "kernel " << specs[i].entry << " (" << specs[i].what << ") does not compile:\n"
        << errors[i] << "\n"
        << specs[i].source;
  }
  EXPECT_GE(specs.size(), 30u);
}

}  // namespace
}  // namespace nvhcq::tensor
