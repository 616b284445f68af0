// Whole forward passes written with the API: a 3-layer MLP and a small CNN,
// checked against the float64 reference built from the same weights.
#include <cmath>

#include "ops/op_cases.h"
#include "tensor/nn.h"

namespace nvhcq::optest {
namespace {

namespace nn = tensor::nn;

Ref relu(const Ref& x) { return ref::map(x, [](double v) { return v > 0 ? v : 0; }); }
Ref add_bias(const Ref& x, const Ref& b) { return ref::zip(x, b, [](double p, double q) { return p + q; }); }
Ref linear(const Ref& x, const Ref& w, const Ref& b) { return add_bias(ref::matmul(x, ref::permute(w, {1, 0})), b); }
Ref gelu(const Ref& x) { return ref::map(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }); }

// Weights scaled like a real init (uniform in +-1/sqrt(fan_in)).
Input weight(Rng& rng, const Shape& s, int64_t fan_in, DType t, const std::string& device) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return make_input(rng, s, t, device, Layout::kContiguous, {-bound, bound});
}

void mlp(DType t, const std::string& device) {
  Rng rng(join_name({"mlp", dname(t)}));
  Input x = make_input(rng, {16, 32}, t, device, Layout::kContiguous, {-2, 2});
  Input w1 = weight(rng, {64, 32}, 32, t, device), b1 = weight(rng, {64}, 32, t, device);
  Input w2 = weight(rng, {48, 64}, 64, t, device), b2 = weight(rng, {48}, 64, t, device);
  Input w3 = weight(rng, {10, 48}, 48, t, device), b3 = weight(rng, {10}, 48, t, device);

  Tensor h = nn::linear(x.t, w1.t, b1.t).relu();
  h = nn::linear(h, w2.t, b2.t).gelu();
  Tensor out = nn::linear(h, w3.t, b3.t).log_softmax(-1);

  Ref rh = relu(linear(x.r, w1.r, b1.r));
  rh = gelu(linear(rh, w2.r, b2.r));
  Ref expected = ref::log_softmax(linear(rh, w3.r, b3.r), -1);
  EXPECT_TRUE(matches(out, expected, t, tol_for(t, 16)));
}

void cnn(DType t, const std::string& device) {
  Rng rng(join_name({"cnn", dname(t)}));
  Input x = make_input(rng, {2, 3, 16, 16}, t, device, Layout::kContiguous, {-1, 1});
  Input c1 = weight(rng, {8, 3, 3, 3}, 27, t, device), cb1 = weight(rng, {8}, 27, t, device);
  Input c2 = weight(rng, {16, 4, 3, 3}, 36, t, device), cb2 = weight(rng, {16}, 36, t, device);
  Input mean = make_input(rng, {16}, t, device, Layout::kContiguous, {-0.2, 0.2});
  Input var = make_input(rng, {16}, t, device, Layout::kContiguous, {0.5, 1.5});
  Input gamma = make_input(rng, {16}, t, device, Layout::kContiguous, {0.5, 1.5});
  Input beta = make_input(rng, {16}, t, device, Layout::kContiguous, {-0.5, 0.5});
  Input fw = weight(rng, {10, 256}, 256, t, device), fb = weight(rng, {10}, 256, t, device);

  Tensor h = nn::conv2d(x.t, c1.t, cb1.t, 1, 1).relu();                     // [2, 8, 16, 16]
  h = nn::max_pool2d(h, 2);                                                 // [2, 8, 8, 8]
  h = nn::conv2d(h, c2.t, cb2.t, 1, 1, 1, 2);                               // [2, 16, 8, 8]
  h = nn::batch_norm(h, mean.t, var.t, gamma.t, beta.t).relu();
  h = nn::avg_pool2d(h, 2);                                                 // [2, 16, 4, 4]
  Tensor out = nn::linear(h.flatten(1), fw.t, fb.t).softmax(-1);            // [2, 10]

  ref::Conv same{1, 1, 1, 1, 1, 1, 1};
  Ref rh = relu(ref::conv2d(x.r, c1.r, &cb1.r, same));
  rh = ref::pool2d(rh, true, 2, 2, 2, 2, 0, 0, 1, 1, true);
  ref::Conv grouped = same;
  grouped.groups = 2;
  rh = ref::conv2d(rh, c2.r, &cb2.r, grouped);
  for (int64_t i = 0; i < rh.numel(); ++i) {
    const int64_t c = rh.index_of(i)[1];
    rh.v[i] = (rh.v[i] - mean.r.v[c]) / std::sqrt(var.r.v[c] + 1e-5) * gamma.r.v[c] + beta.r.v[c];
  }
  rh = ref::pool2d(relu(rh), false, 2, 2, 2, 2, 0, 0, 1, 1, true);
  rh.shape = {2, 256};
  Ref expected = ref::softmax(linear(rh, fw.r, fb.r), -1);
  EXPECT_TRUE(matches(out, expected, t, tol_for(t, 16)));
}

}  // namespace

std::vector<OpCase> model_cases() {
  std::vector<OpCase> cases;
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    cases.push_back({join_name({"mlp3", dname(t)}), {t}, [t](const std::string& device) { mlp(t, device); }});
    cases.push_back({join_name({"small_cnn", dname(t)}), {t}, [t](const std::string& device) { cnn(t, device); }});
  }
  return cases;
}

TEST_P(Models, ForwardMatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Models);

}  // namespace nvhcq::optest
