// Networks: whole forward passes through the tensor API, checked against float64
// references computed here from the same (dtype-rounded) weights and inputs:
// an MNIST-shaped MLP 784-128-10, a CNN (conv, max/avg pool, linear), a
// pre-norm transformer block (causal multi-head attention + GELU FFN, residuals)
// and a 10-layer MLP (errors compound through depth).

#include <cmath>

#include "ops/robust_op_cases.h"
#include "tensor/nn.h"

namespace nvhcq::optest {
namespace {

namespace nn = tensor::nn;

// ---- float64 reference layers, on row-major Refs ------------------------------

// y[r, o] = sum_i x[r, i] * w[o, i] + b[o], for x of any rank (rows = leading axes).
Ref linear(const Ref& x, const Ref& w, const Ref& b) {
  const int64_t in = x.shape.back(), out = w.shape[0], rows = x.numel() / in;
  Shape s = x.shape;
  s.back() = out;
  Ref y = Ref::filled(s, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b.v.empty() ? 0.0 : b.v[o];
      for (int64_t i = 0; i < in; ++i) acc += x.v[r * in + i] * w.v[o * in + i];
      y.v[r * out + o] = acc;
    }
  }
  return y;
}

Ref relu(Ref x) {
  for (double& v : x.v) v = v > 0 ? v : 0;
  return x;
}

Ref gelu(Ref x) {
  for (double& v : x.v) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  return x;
}

Ref add(Ref a, const Ref& b) {
  for (size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
  return a;
}

Ref softmax_rows(Ref x) {
  const int64_t n = x.shape.back();
  for (int64_t r = 0; r < x.numel() / n; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x.v[r * n + i]);
    for (int64_t i = 0; i < n; ++i) s += std::exp(x.v[r * n + i] - m);
    for (int64_t i = 0; i < n; ++i) x.v[r * n + i] = std::exp(x.v[r * n + i] - m) / s;
  }
  return x;
}

Ref layer_norm_rows(Ref x, const Ref& g, const Ref& b) {
  const int64_t n = x.shape.back();
  for (int64_t r = 0; r < x.numel() / n; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x.v[r * n + i];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) var += (x.v[r * n + i] - mean) * (x.v[r * n + i] - mean);
    var /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      x.v[r * n + i] = (x.v[r * n + i] - mean) / std::sqrt(var + 1e-5) * g.v[i] + b.v[i];
    }
  }
  return x;
}

// NCHW convolution, stride 1, zero padding `pad`, with bias.
Ref conv2d(const Ref& x, const Ref& w, const Ref& bias, int64_t pad) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], kh = w.shape[2], kw = w.shape[3];
  const int64_t oh = h + 2 * pad - kh + 1, ow = wd + 2 * pad - kw + 1;
  Ref y = Ref::filled({n, o, oh, ow}, 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q) {
          double acc = bias.v[oc];
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t yy = r - pad + i, xx = q - pad + j;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                acc +=
                    x.v[((b * c + ic) * h + yy) * wd + xx] * w.v[((oc * c + ic) * kh + i) * kw + j];
              }
          y.v[((b * o + oc) * oh + r) * ow + q] = acc;
        }
  return y;
}

// 2x2 pooling with stride 2.
Ref pool2(const Ref& x, bool is_max) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2] / 2, w = x.shape[3] / 2;
  Ref y = Ref::filled({n, c, h, w}, 0);
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t r = 0; r < h; ++r)
      for (int64_t q = 0; q < w; ++q) {
        const double* base = &x.v[(p * x.shape[2] + 2 * r) * x.shape[3] + 2 * q];
        const double a = base[0], b = base[1], d = base[x.shape[3]], e = base[x.shape[3] + 1];
        y.v[(p * h + r) * w + q] =
            is_max ? std::max(std::max(a, b), std::max(d, e)) : (a + b + d + e) / 4;
      }
  return y;
}

// Causal attention of [B, S, H*Dh] projections, heads split from the last axis.
Ref causal_attention(const Ref& q, const Ref& k, const Ref& v, int64_t heads) {
  const int64_t B = q.shape[0], S = q.shape[1], D = q.shape[2], dh = D / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  Ref out = Ref::filled(q.shape, 0);
  std::vector<double> p(S);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < S; ++i) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < dh; ++e)
            dot += q.v[(b * S + i) * D + h * dh + e] * k.v[(b * S + j) * D + h * dh + e];
          p[j] = dot * scale;
          m = std::max(m, p[j]);
        }
        for (int64_t j = 0; j <= i; ++j) s += (p[j] = std::exp(p[j] - m));
        for (int64_t e = 0; e < dh; ++e) {
          double acc = 0;
          for (int64_t j = 0; j <= i; ++j) acc += p[j] * v.v[(b * S + j) * D + h * dh + e];
          out.v[(b * S + i) * D + h * dh + e] = acc / s;
        }
      }
  return out;
}

// Weights like a real initialization: uniform in +-gain/sqrt(fan_in).
Input weight(Rng& rng, const Shape& s, int64_t fan_in, DType t, const std::string& device,
             double gain = 1.0) {
  const double bound = gain / std::sqrt(static_cast<double>(fan_in));
  return make_input(rng, s, t, device, Layout::kContiguous, {-bound, bound});
}

// ---- the networks --------------------------------------------------------------

void mlp_784_128_10(DType t, const std::string& device) {
  Rng rng(join_name({"mlp_784_128_10", dname(t)}));
  Input x = make_input(rng, {32, 784}, t, device, Layout::kContiguous, {0, 1});  // pixels
  Input w1 = weight(rng, {128, 784}, 784, t, device), b1 = weight(rng, {128}, 784, t, device);
  Input w2 = weight(rng, {10, 128}, 128, t, device), b2 = weight(rng, {10}, 128, t, device);
  Tensor probs = nn::linear(nn::linear(x.t, w1.t, b1.t).relu(), w2.t, b2.t).softmax(-1);
  Ref expected = softmax_rows(linear(relu(linear(x.r, w1.r, b1.r)), w2.r, b2.r));
  EXPECT_TRUE(matches(probs, expected, t, tol_for(t, 4)));
}

void cnn(DType t, const std::string& device) {
  Rng rng(join_name({"cnn", dname(t)}));
  Input x = make_input(rng, {4, 1, 28, 28}, t, device, Layout::kContiguous, {0, 1});
  Input c1 = weight(rng, {8, 1, 3, 3}, 9, t, device), cb1 = weight(rng, {8}, 9, t, device);
  Input c2 = weight(rng, {16, 8, 3, 3}, 72, t, device), cb2 = weight(rng, {16}, 72, t, device);
  Input fw = weight(rng, {10, 784}, 784, t, device), fb = weight(rng, {10}, 784, t, device);
  Tensor h = nn::max_pool2d(nn::conv2d(x.t, c1.t, cb1.t, 1, 1).relu(), 2);  // [4, 8, 14, 14]
  h = nn::avg_pool2d(nn::conv2d(h, c2.t, cb2.t, 1, 1).relu(), 2);           // [4, 16, 7, 7]
  Tensor logits = nn::linear(h.flatten(1), fw.t, fb.t);                     // [4, 10]
  Ref rh = pool2(relu(conv2d(x.r, c1.r, cb1.r, 1)), true);
  rh = pool2(relu(conv2d(rh, c2.r, cb2.r, 1)), false);
  rh.shape = {4, 784};
  EXPECT_TRUE(matches(logits, linear(rh, fw.r, fb.r), t, tol_for(t, 8)));
}

void transformer_block(DType t, const std::string& device) {
  const int64_t B = 2, S = 16, D = 64, H = 4, F = 256;
  Rng rng(join_name({"transformer_block", dname(t)}));
  Input x = make_input(rng, {B, S, D}, t, device, Layout::kContiguous, {-1, 1});
  Input g1 = make_input(rng, {D}, t, device, Layout::kContiguous, {0.5, 1.5});
  Input be1 = make_input(rng, {D}, t, device, Layout::kContiguous, {-0.2, 0.2});
  Input g2 = make_input(rng, {D}, t, device, Layout::kContiguous, {0.5, 1.5});
  Input be2 = make_input(rng, {D}, t, device, Layout::kContiguous, {-0.2, 0.2});
  Input wq = weight(rng, {D, D}, D, t, device), bq = weight(rng, {D}, D, t, device);
  Input wk = weight(rng, {D, D}, D, t, device), bk = weight(rng, {D}, D, t, device);
  Input wv = weight(rng, {D, D}, D, t, device), bv = weight(rng, {D}, D, t, device);
  Input wo = weight(rng, {D, D}, D, t, device), bo = weight(rng, {D}, D, t, device);
  Input w1 = weight(rng, {F, D}, D, t, device), b1 = weight(rng, {F}, D, t, device);
  Input w2 = weight(rng, {D, F}, F, t, device), b2 = weight(rng, {D}, F, t, device);

  auto heads = [&](const Tensor& p) { return p.reshape({B, S, H, D / H}).permute({0, 2, 1, 3}); };
  Tensor h = nn::layer_norm(x.t, {D}, g1.t, be1.t);
  Tensor a = nn::scaled_dot_product_attention(
      heads(nn::linear(h, wq.t, bq.t)), heads(nn::linear(h, wk.t, bk.t)),
      heads(nn::linear(h, wv.t, bv.t)), Tensor(), /*is_causal=*/true);
  Tensor x1 = x.t + nn::linear(a.permute({0, 2, 1, 3}).reshape({B, S, D}), wo.t, bo.t);
  Tensor ffn =
      nn::linear(nn::linear(nn::layer_norm(x1, {D}, g2.t, be2.t), w1.t, b1.t).gelu(), w2.t, b2.t);
  Tensor out = x1 + ffn;

  Ref rh = layer_norm_rows(x.r, g1.r, be1.r);
  Ref ra =
      causal_attention(linear(rh, wq.r, bq.r), linear(rh, wk.r, bk.r), linear(rh, wv.r, bv.r), H);
  Ref rx1 = add(x.r, linear(ra, wo.r, bo.r));
  Ref rf = linear(gelu(linear(layer_norm_rows(rx1, g2.r, be2.r), w1.r, b1.r)), w2.r, b2.r);
  EXPECT_TRUE(matches(out, add(rx1, rf), t, tol_for(t, 16)));
}

void mlp_10_layers(DType t, const std::string& device) {
  const int64_t width = 64;
  Rng rng(join_name({"mlp_10_layers", dname(t)}));
  Input x = make_input(rng, {16, width}, t, device, Layout::kContiguous, {-1, 1});
  Tensor h = x.t;
  Ref rh = x.r;
  for (int layer = 0; layer < 10; ++layer) {
    // He-style gain keeps the activations' scale through ReLU layers.
    Input w = weight(rng, {width, width}, width, t, device, std::sqrt(6.0));
    Input b = weight(rng, {width}, width, t, device, 0.1);
    h = nn::linear(h, w.t, b.t);
    rh = linear(rh, w.r, b.r);
    if (layer < 9) {
      h = h.relu();
      rh = relu(rh);
    }
  }
  EXPECT_TRUE(matches(h, rh, t, tol_for(t, 16)));
}

}  // namespace

std::vector<OpCase> network_cases() {
  std::vector<OpCase> cases;
  for (DType t : {DType::kF32, DType::kF16, DType::kF64}) {
    cases.push_back({join_name({"mlp_784_128_10", dname(t)}), {t}, [t](const std::string& d) {
                       mlp_784_128_10(t, d);
                     }});
    cases.push_back({join_name({"cnn_conv_pool_linear", dname(t)}), {t}, [t](const std::string& d) {
                       cnn(t, d);
                     }});
    cases.push_back({join_name({"transformer_block", dname(t)}), {t}, [t](const std::string& d) {
                       transformer_block(t, d);
                     }});
    cases.push_back({join_name({"mlp_10_layers", dname(t)}), {t}, [t](const std::string& d) {
                       mlp_10_layers(t, d);
                     }});
  }
  return cases;
}

TEST_P(Networks, ForwardPassMatchesFloat64Reference) {
  run_case();
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Networks);

}  // namespace nvhcq::optest
