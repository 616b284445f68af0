// Neural-network functions: convolutions, pooling, normalizations, attention
// and losses against float64 references.
#include <cmath>

#include "ops/op_cases.h"
#include "tensor/nn.h"

namespace nvhcq::optest {
namespace {

namespace nn = tensor::nn;

const std::vector<DType>& nn_dtypes() {
  static const std::vector<DType> v = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64};
  return v;
}

struct ConvSpec {
  const char* name;
  Shape x, w;
  ref::Conv p;
  bool bias;
};

Ref layer_norm_ref(const Ref& x, int k, const Ref* w, const Ref* b, double eps, bool rms) {
  std::vector<int> axes;
  for (int i = 0; i < k; ++i) axes.push_back(x.ndim() - k + i);
  Ref mean = ref::reduce(x, axes, true, ref::fmean);
  Ref var = ref::reduce(x, axes, true, [](const std::vector<double>& g) { return ref::fvar(g, 0); });
  Ref ms = ref::reduce(x, axes, true, [](const std::vector<double>& g) {
    double s = 0;
    for (double v : g) s += v * v;
    return s / static_cast<double>(g.size());
  });
  Ref y = rms ? ref::zip(x, ms, [eps](double v, double q) { return v / std::sqrt(q + eps); })
              : ref::zip(ref::zip(x, mean, [](double v, double m) { return v - m; }), var,
                         [eps](double d, double s) { return d / std::sqrt(s + eps); });
  if (w) y = ref::zip(y, *w, [](double a, double c) { return a * c; });
  if (b) y = ref::zip(y, *b, [](double a, double c) { return a + c; });
  return y;
}

Ref channel_vector(const Ref& v, int ndim) {
  Shape s(ndim, 1);
  s[1] = v.shape[0];
  return Ref(s, v.v);
}

}  // namespace

std::vector<OpCase> nn_cases() {
  std::vector<OpCase> cases;
  int variant = 0;
  auto next_dtype = [&]() { return nn_dtypes()[variant++ % nn_dtypes().size()]; };

  const std::vector<ConvSpec> convs = {
      {"conv2d_groups2_stride2_pad1", {2, 4, 9, 11}, {6, 2, 3, 3}, {2, 2, 1, 1, 1, 1, 2}, true},
      {"conv2d_dilation2_pad2", {1, 3, 13, 17}, {5, 3, 3, 3}, {1, 1, 2, 2, 2, 2, 1}, false},
      {"conv2d_1x1", {2, 5, 7, 7}, {3, 5, 1, 1}, {1, 1, 0, 0, 1, 1, 1}, true},
      {"conv2d_depthwise", {1, 6, 8, 8}, {6, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 6}, true},
      {"conv2d_asymmetric", {2, 3, 10, 9}, {4, 3, 2, 4}, {2, 1, 0, 2, 1, 2, 1}, false},
      {"conv2d_large_plane", {1, 2, 40, 40}, {4, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1}, true},
  };
  for (const auto& c : convs) {
    for (int rep = 0; rep < 2; ++rep) {
      const DType t = next_dtype();
      const std::string name = join_name({c.name, dname(t)});
      cases.push_back({name, {t}, [c, t, name](const std::string& device) {
                         Rng rng(name);
                         Input x = make_input(rng, c.x, t, device, Layout::kContiguous, {-1, 1});
                         Input w = make_input(rng, c.w, t, device, Layout::kFlipped, {-1, 1});
                         Input b = make_input(rng, {c.w[0]}, t, device, Layout::kContiguous, {-1, 1});
                         Ref expected = ref::conv2d(x.r, w.r, c.bias ? &b.r : nullptr, c.p);
                         Tensor y = nn::conv2d(x.t, w.t, c.bias ? b.t : Tensor(), {c.p.stride_h, c.p.stride_w},
                                               {c.p.pad_h, c.p.pad_w}, {c.p.dil_h, c.p.dil_w}, c.p.groups);
                         EXPECT_TRUE(matches(y, expected, t, tol_for(t, 8)));
                       }});
    }
  }
  for (DType t : {DType::kF32, DType::kF64}) {
    const std::string name = join_name({"conv1d_groups_stride_dilation", dname(t)});
    cases.push_back({name, {t}, [t, name](const std::string& device) {
                       Rng rng(name);
                       Input x = make_input(rng, {2, 4, 31}, t, device, Layout::kTransposed, {-1, 1});
                       Input w = make_input(rng, {6, 2, 5}, t, device, Layout::kContiguous, {-1, 1});
                       Input b = make_input(rng, {6}, t, device, Layout::kContiguous, {-1, 1});
                       ref::Conv p{1, 3, 0, 2, 1, 2, 2};
                       Ref x4(Shape{2, 4, 1, 31}, x.r.v), w4(Shape{6, 2, 1, 5}, w.r.v);
                       Ref e = ref::conv2d(x4, w4, &b.r, p);
                       e.shape = {e.shape[0], e.shape[1], e.shape[3]};
                       EXPECT_TRUE(matches(nn::conv1d(x.t, w.t, b.t, 3, 2, 2, 2), e, t, tol_for(t, 8)));
                     }});
  }
  const std::vector<ConvSpec> transposed = {
      {"conv_transpose2d_stride2_outpad1", {1, 4, 5, 5}, {4, 3, 3, 3}, {2, 2, 1, 1, 1, 1, 1, 1, 1}, true},
      {"conv_transpose2d_groups2", {2, 4, 4, 6}, {4, 2, 2, 3}, {1, 2, 0, 1, 1, 1, 2, 0, 1}, false},
      {"conv_transpose2d_dilation2", {1, 2, 6, 5}, {2, 3, 3, 2}, {2, 1, 2, 0, 2, 2, 1, 1, 0}, true},
  };
  for (const auto& c : transposed) {
    for (int rep = 0; rep < 2; ++rep) {
      const DType t = next_dtype();
      const std::string name = join_name({c.name, dname(t)});
      cases.push_back({name, {t}, [c, t, name](const std::string& device) {
                         Rng rng(name);
                         Input x = make_input(rng, c.x, t, device, Layout::kStrided, {-1, 1});
                         Input w = make_input(rng, c.w, t, device, Layout::kContiguous, {-1, 1});
                         Input b = make_input(rng, {c.w[1] * c.p.groups}, t, device, Layout::kContiguous, {-1, 1});
                         Ref expected = ref::conv_transpose2d(x.r, w.r, c.bias ? &b.r : nullptr, c.p);
                         Tensor y = nn::conv_transpose2d(x.t, w.t, c.bias ? b.t : Tensor(), {c.p.stride_h, c.p.stride_w},
                                                         {c.p.pad_h, c.p.pad_w}, {c.p.out_pad_h, c.p.out_pad_w}, c.p.groups,
                                                         {c.p.dil_h, c.p.dil_w});
                         EXPECT_TRUE(matches(y, expected, t, tol_for(t, 8)));
                       }});
    }
  }
  struct PoolSpec {
    const char* name;
    bool max;
    int64_t k, s, p, d;
    bool include_pad;
  };
  const std::vector<PoolSpec> pools = {
      {"max_pool2d_k2", true, 2, 2, 0, 1, true},        {"max_pool2d_k3_s2_p1", true, 3, 2, 1, 1, true},
      {"max_pool2d_dilated", true, 2, 1, 1, 2, true},   {"avg_pool2d_k2", false, 2, 2, 0, 1, true},
      {"avg_pool2d_k3_p1_incl", false, 3, 2, 1, 1, true}, {"avg_pool2d_k3_p1_excl", false, 3, 1, 1, 1, false},
  };
  for (const auto& p : pools) {
    for (int rep = 0; rep < 2; ++rep) {
      const DType t = next_dtype();
      const std::string name = join_name({p.name, dname(t)});
      cases.push_back({name, {t}, [p, t, name](const std::string& device) {
                         Rng rng(name);
                         Input x = make_input(rng, {2, 3, 11, 13}, t, device, Layout::kTransposed, {-3, 3});
                         Ref expected = ref::pool2d(x.r, p.max, p.k, p.k, p.s, p.s, p.p, p.p, p.d, p.d, p.include_pad);
                         Tensor y = p.max ? nn::max_pool2d(x.t, p.k, p.s, p.p, p.d) : nn::avg_pool2d(x.t, p.k, p.s, p.p, p.include_pad);
                         EXPECT_TRUE(matches(y, expected, t, tol_for(t, 2)));
                       }});
    }
  }
  cases.push_back({"max_pool2d_i32_3d_input", {DType::kI32}, [](const std::string& device) {
                     Rng rng("maxpool_i32");
                     Input x = make_input(rng, {3, 8, 9}, DType::kI32, device, Layout::kContiguous, {-100, 100, true});
                     Ref x4(Shape{1, 3, 8, 9}, x.r.v);
                     Ref e = ref::pool2d(x4, true, 3, 3, 3, 3, 0, 0, 1, 1, true);
                     e.shape = {3, e.shape[2], e.shape[3]};
                     EXPECT_TRUE(matches(nn::max_pool2d(x.t, 3), e, DType::kI32, {}));
                   }});
  // Normalizations.
  for (DType t : nn_dtypes()) {
    const std::string bn = join_name({"batch_norm", dname(t)});
    cases.push_back({bn, {t}, [t, bn](const std::string& device) {
                       Rng rng(bn);
                       Input x = make_input(rng, {2, 5, 4, 3}, t, device, Layout::kFlipped, {-2, 2});
                       Input mean = make_input(rng, {5}, t, device, Layout::kContiguous, {-1, 1});
                       Input var = make_input(rng, {5}, t, device, Layout::kContiguous, {0.5, 2});
                       Input w = make_input(rng, {5}, t, device, Layout::kContiguous, {-2, 2});
                       Input b = make_input(rng, {5}, t, device, Layout::kContiguous, {-1, 1});
                       Ref y = ref::zip(x.r, channel_vector(mean.r, 4), [](double a, double m) { return a - m; });
                       y = ref::zip(y, channel_vector(var.r, 4), [](double a, double v) { return a / std::sqrt(v + 1e-5); });
                       y = ref::zip(y, channel_vector(w.r, 4), [](double a, double c) { return a * c; });
                       y = ref::zip(y, channel_vector(b.r, 4), [](double a, double c) { return a + c; });
                       EXPECT_TRUE(matches(nn::batch_norm(x.t, mean.t, var.t, w.t, b.t), y, t, tol_for(t, 4)));
                     }});
    const std::string ln = join_name({"layer_norm", dname(t)});
    cases.push_back({ln, {t}, [t, ln](const std::string& device) {
                       Rng rng(ln);
                       Input x = make_input(rng, {3, 7, 33}, t, device, Layout::kTransposed, {-2, 2});
                       Input w = make_input(rng, {7, 33}, t, device, Layout::kContiguous, {-2, 2});
                       Input b = make_input(rng, {7, 33}, t, device, Layout::kContiguous, {-1, 1});
                       Ref e = layer_norm_ref(x.r, 2, &w.r, &b.r, 1e-5, false);
                       EXPECT_TRUE(matches(nn::layer_norm(x.t, {7, 33}, w.t, b.t), e, t, tol_for(t, 8)));
                     }});
    const std::string rn = join_name({"rms_norm", dname(t)});
    cases.push_back({rn, {t}, [t, rn](const std::string& device) {
                       Rng rng(rn);
                       Input x = make_input(rng, {5, 127}, t, device, Layout::kStrided, {-2, 2});
                       Input w = make_input(rng, {127}, t, device, Layout::kContiguous, {-2, 2});
                       Ref e = layer_norm_ref(x.r, 1, &w.r, nullptr, 1e-6, true);
                       EXPECT_TRUE(matches(nn::rms_norm(x.t, {127}, w.t), e, t, tol_for(t, 4)));
                     }});
    const std::string gn = join_name({"group_norm", dname(t)});
    cases.push_back({gn, {t}, [t, gn](const std::string& device) {
                       Rng rng(gn);
                       Input x = make_input(rng, {2, 6, 5, 4}, t, device, Layout::kContiguous, {-2, 2});
                       Input w = make_input(rng, {6}, t, device, Layout::kContiguous, {-2, 2});
                       Input b = make_input(rng, {6}, t, device, Layout::kContiguous, {-1, 1});
                       Ref g(Shape{2, 3, 40}, x.r.v);
                       Ref e = layer_norm_ref(g, 1, nullptr, nullptr, 1e-5, false);
                       e.shape = x.r.shape;
                       e = ref::zip(ref::zip(e, channel_vector(w.r, 4), [](double a, double c) { return a * c; }),
                                    channel_vector(b.r, 4), [](double a, double c) { return a + c; });
                       EXPECT_TRUE(matches(nn::group_norm(x.t, 3, w.t, b.t), e, t, tol_for(t, 8)));
                     }});
  }
  // Attention.
  struct AttnSpec {
    const char* name;
    Shape q, k, v;
    bool causal;
    int mask;  // 0 none, 1 bool, 2 float
  };
  const std::vector<AttnSpec> attns = {
      {"sdpa_plain", {2, 3, 7, 8}, {2, 3, 11, 8}, {2, 3, 11, 5}, false, 0},
      {"sdpa_causal", {1, 2, 9, 16}, {1, 2, 9, 16}, {1, 2, 9, 16}, true, 0},
      {"sdpa_bool_mask_bcast", {2, 4, 5, 8}, {1, 4, 6, 8}, {1, 4, 6, 8}, false, 1},
      {"sdpa_float_mask", {3, 6, 4}, {3, 10, 4}, {3, 10, 4}, false, 2},
  };
  for (const auto& a : attns) {
    for (int rep = 0; rep < 2; ++rep) {
      const DType t = next_dtype();
      const std::string name = join_name({a.name, dname(t)});
      cases.push_back({name, {t}, [a, t, name](const std::string& device) {
                         Rng rng(name);
                         Input q = make_input(rng, a.q, t, device, Layout::kTransposed, {-1, 1});
                         Input k = make_input(rng, a.k, t, device, Layout::kContiguous, {-1, 1});
                         Input v = make_input(rng, a.v, t, device, Layout::kFlipped, {-1, 1});
                         const int64_t l = a.q[a.q.size() - 2], s = a.k[a.k.size() - 2], e = a.q.back();
                         Input m = make_input(rng, {l, s}, a.mask == 1 ? DType::kBool : t, device, Layout::kContiguous, {-1, 1});
                         if (a.mask == 1) {  // keep column 0 so no row is fully masked
                           for (int64_t i = 0; i < l; ++i) m.r.v[i * s] = 1;
                           m.t = upload(m.r, DType::kBool, device);
                         }
                         // Reference: softmax(q k^T / sqrt(e) + mask) v.
                         std::vector<int> tr;
                         for (int i = 0; i < static_cast<int>(a.k.size()); ++i) tr.push_back(i);
                         std::swap(tr[tr.size() - 1], tr[tr.size() - 2]);
                         Ref scores = ref::map(ref::matmul(q.r, ref::permute(k.r, tr)), [e](double x) { return x / std::sqrt(double(e)); });
                         if (a.mask == 1) scores = ref::where(m.r, scores, Ref({}, {-INFINITY}));
                         if (a.mask == 2) scores = ref::zip(scores, m.r, [](double x, double y) { return x + y; });
                         if (a.causal) {
                           for (int64_t i = 0; i < scores.numel(); ++i) {
                             auto idx = scores.index_of(i);
                             if (idx.back() > idx[idx.size() - 2]) scores.v[i] = -INFINITY;
                           }
                         }
                         Ref expected = ref::matmul(ref::softmax(scores, -1), v.r);
                         Tensor y = nn::scaled_dot_product_attention(q.t, k.t, v.t, a.mask ? m.t : Tensor(), a.causal);
                         EXPECT_TRUE(matches(y, expected, t, tol_for(t, 8)));
                       }});
    }
  }
  // Cross entropy: class indices, probabilities, label smoothing, reductions.
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    for (const char* reduction : {"mean", "sum", "none"}) {
      for (double smoothing : {0.0, 0.1}) {
        const std::string name = join_name({"cross_entropy", dname(t), reduction, smoothing > 0 ? "smooth" : ""});
        const std::string red = reduction;
        cases.push_back({name, {t, DType::kI64}, [t, red, smoothing, name](const std::string& device) {
                           Rng rng(name);
                           Input logits = make_input(rng, {6, 10}, t, device, Layout::kTransposed, {-4, 4});
                           Input target = make_input(rng, {6}, DType::kI64, device, Layout::kContiguous, {0, 9, true});
                           Ref lp = ref::log_softmax(logits.r, 1);
                           Ref loss = Ref::filled({6}, 0);
                           for (int64_t i = 0; i < 6; ++i) {
                             double nll = -lp.at({i, static_cast<int64_t>(target.r.v[i])}), mean_lp = 0;
                             for (int64_t c = 0; c < 10; ++c) mean_lp += lp.at({i, c}) / 10;
                             loss.v[i] = (1 - smoothing) * nll - smoothing * mean_lp;
                           }
                           Ref expected = red == "none" ? loss : Ref({}, {red == "sum" ? ref::fsum(loss.v) : ref::fmean(loss.v)});
                           EXPECT_TRUE(matches(nn::cross_entropy(logits.t, target.t, red, smoothing), expected, t, tol_for(t, 8)));
                         }});
      }
    }
  }
  cases.push_back({"cross_entropy_probabilities", {DType::kF32}, [](const std::string& device) {
                     Rng rng("ce_prob");
                     Input logits = make_input(rng, {4, 7}, DType::kF32, device, Layout::kContiguous, {-3, 3});
                     Input p = make_input(rng, {4, 7}, DType::kF32, device, Layout::kContiguous, {0, 1});
                     Ref lp = ref::log_softmax(logits.r, 1);
                     Ref per = ref::reduce(ref::zip(p.r, lp, [](double a, double b) { return -a * b; }), {1}, false, ref::fsum);
                     EXPECT_TRUE(matches(nn::cross_entropy(logits.t, p.t), Ref({}, {ref::fmean(per.v)}), DType::kF32, tol_for(DType::kF32, 8)));
                   }});
  cases.push_back({"cross_entropy_1d_logits", {DType::kF32}, [](const std::string& device) {
                     Tensor logits = Tensor::from_vector<float>({1, 2, 3}, {3}, DType::kF32, device);
                     Tensor target = Tensor::scalar(2, DType::kI64, device);
                     const double expected = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
                     EXPECT_TRUE(matches(nn::cross_entropy(logits, target), Ref({}, {expected}), DType::kF32, tol_for(DType::kF32, 4)));
                   }});
  return cases;
}

TEST_P(NeuralNet, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NeuralNet);

}  // namespace nvhcq::optest
