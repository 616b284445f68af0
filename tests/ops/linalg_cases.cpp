// matmul (batched, broadcast, 1-D operands, views, empty), dot and linear.
#include <cmath>

#include "ops/op_cases.h"
#include "tensor/nn.h"

namespace nvhcq::optest {
namespace {

struct MatmulShape {
  const char* name;
  Shape a, b;
  Layout la, lb;
};

// a @ b for the reference, handling 1-D operands as NumPy does.
Ref matmul_ref(const Ref& a, const Ref& b) {
  Ref x = a, y = b;
  if (a.ndim() == 1) x.shape = {1, a.shape[0]};
  if (b.ndim() == 1) y.shape = {b.shape[0], 1};
  Ref out = ref::matmul(x, y);
  Shape s(out.shape.begin(), out.shape.end() - 2);
  if (a.ndim() != 1) s.push_back(out.shape[out.shape.size() - 2]);
  if (b.ndim() != 1) s.push_back(out.shape.back());
  out.shape = s;
  return out;
}

}  // namespace

std::vector<OpCase> linalg_cases() {
  using L = Layout;
  const std::vector<MatmulShape> shapes = {
      {"13x17_17x7", {13, 17}, {17, 7}, L::kContiguous, L::kContiguous},
      {"127x127_sq", {127, 127}, {127, 127}, L::kTransposed, L::kContiguous},
      {"gemv_1x300_300x1", {1, 300}, {300, 1}, L::kContiguous, L::kFlipped},
      {"batch_bcast_2x3x4x5_5x6", {2, 3, 4, 5}, {5, 6}, L::kStrided, L::kTransposed},
      {"batch_bcast_3x1x4x5_2x5x3", {3, 1, 4, 5}, {2, 5, 3}, L::kContiguous, L::kBroadcast},
      {"vec_mat", {17}, {17, 9}, L::kFlipped, L::kContiguous},
      {"mat_vec", {9, 17}, {17}, L::kTransposed, L::kStrided},
      {"vec_vec", {33}, {33}, L::kContiguous, L::kContiguous},
      {"k_zero", {4, 0}, {0, 5}, L::kContiguous, L::kContiguous},
      {"m_zero", {0, 6}, {6, 5}, L::kContiguous, L::kContiguous},
      {"padded_operand", {9, 20}, {20, 33}, L::kPadded, L::kContiguous},
      {"tall_130x70_70x90", {130, 70}, {70, 90}, L::kContiguous, L::kTransposed},
      // A few rows (the GPU backends' thin kernel): k split across warps, a
      // partial last 32-column group, transposed and broadcast B.
      {"thin_1x515_515x70", {1, 515}, {515, 70}, L::kContiguous, L::kContiguous},
      {"thin_3x200_200x33", {3, 200}, {200, 33}, L::kStrided, L::kTransposed},
      {"thin_batch_2x4x96_96x40", {2, 4, 96}, {96, 40}, L::kContiguous, L::kBroadcast},
      {"thin_5x64_64x31", {5, 64}, {64, 31}, L::kTransposed, L::kContiguous},
  };
  const std::vector<DType> dtypes = {DType::kF32, DType::kF16, DType::kBF16,
                                     DType::kF64, DType::kI32, DType::kI8};
  std::vector<OpCase> cases;
  int variant = 0;
  for (const auto& s : shapes) {
    for (int rep = 0; rep < 2; ++rep) {
      const DType t = dtypes[(variant * 2 + rep) % dtypes.size()];
      const std::string name = join_name({"matmul", s.name, dname(t)});
      cases.push_back(
          {name, {t}, [s, t, name](const std::string& device) {
             Rng rng(name);
             const Domain dom = tensor::is_float(t) ? Domain{-1, 1} : Domain{-3, 3, true};
             Input a = make_input(rng, s.a, t, device, s.la, dom);
             Input b = make_input(rng, s.b, t, device, s.lb, dom);
             Ref expected = wrap_to(matmul_ref(a.r, b.r), t);
             const double k = static_cast<double>(s.a.back());
             Tol tol = tol_for(t, 2);
             tol.atol += tol.rtol * std::sqrt(std::max(k, 1.0)) * 2;
             EXPECT_TRUE(matches(a.t.matmul(b.t), expected, t, tol)) << name;
           }});
    }
    ++variant;
  }
  for (DType t : {DType::kF32, DType::kF64, DType::kI64}) {
    const std::string name = join_name({"dot", dname(t)});
    cases.push_back(
        {name, {t}, [t, name](const std::string& device) {
           Rng rng(name);
           Input a = make_input(rng, {4097}, t, device, Layout::kFlipped, {-3, 3, true});
           Input b = make_input(rng, {4097}, t, device, Layout::kStrided, {-3, 3, true});
           double s = 0;
           for (int64_t i = 0; i < 4097; ++i) s += a.r.v[i] * b.r.v[i];
           EXPECT_TRUE(matches(a.t.dot(b.t), Ref({}, {s}), t, tol_for(t)));
         }});
  }
  for (DType t : {DType::kF32, DType::kF16, DType::kF64}) {
    for (bool bias : {true, false}) {
      const std::string name = join_name({"linear", dname(t), bias ? "bias" : "nobias"});
      cases.push_back(
          {name, {t}, [t, bias, name](const std::string& device) {
             Rng rng(name);
             Input x = make_input(rng, {2, 5, 24}, t, device, Layout::kTransposed, {-1, 1});
             Input w = make_input(rng, {10, 24}, t, device, Layout::kContiguous, {-1, 1});
             Input b = make_input(rng, {10}, t, device, Layout::kContiguous, {-1, 1});
             Ref expected = ref::matmul(x.r, ref::permute(w.r, {1, 0}));
             if (bias) expected = ref::zip(expected, b.r, [](double p, double q) { return p + q; });
             Tensor y = tensor::nn::linear(x.t, w.t, bias ? b.t : Tensor());
             EXPECT_TRUE(matches(y, expected, t, tol_for(t, 4)));
           }});
    }
  }
  return cases;
}

TEST_P(Linalg, MatchesFloat64Reference) {
  run_case();
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Linalg);

}  // namespace nvhcq::optest
