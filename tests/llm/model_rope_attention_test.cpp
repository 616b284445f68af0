// RoPE, grouped-query attention and the KV cache against float64 references.

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "base/error.h"
#include "llm/model/attention.h"
#include "llm/model/kv_cache.h"
#include "llm/model/rope.h"
#include "llm/quant/half.h"

namespace nvhcq::llm {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

ModelConfig rope_config(RopeStyle style, int head_dim, int n_rot, float base) {
  ModelConfig c;
  c.head_dim = static_cast<uint32_t>(head_dim);
  c.n_rot = static_cast<uint32_t>(n_rot);
  c.rope_freq_base = base;
  c.rope_style = style;
  return c;
}

// RoPE in double, written from the definition: pair (a, b) of dimension i turns by
// pos * base^(-2i/n_rot) * linear / factor[i].
std::vector<double> reference_rope(const std::vector<float>& x, int n_heads, int head_dim,
                                   int n_rot, double base, int64_t pos, bool neox,
                                   const std::vector<float>& factors, double linear = 1.0) {
  std::vector<double> y(x.begin(), x.end());
  for (int h = 0; h < n_heads; ++h) {
    for (int i = 0; i < n_rot / 2; ++i) {
      double theta = static_cast<double>(pos) * std::pow(base, -2.0 * i / n_rot) * linear;
      if (!factors.empty()) theta /= factors[static_cast<size_t>(i)];
      const size_t a = static_cast<size_t>(h * head_dim + (neox ? i : 2 * i));
      const size_t b = static_cast<size_t>(h * head_dim + (neox ? i + n_rot / 2 : 2 * i + 1));
      const double x0 = x[a], x1 = x[b];
      y[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
      y[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
    }
  }
  return y;
}

struct RopeCase {
  RopeStyle style;
  int head_dim, n_rot;
  bool factors;
  float linear_factor;
};

class RopeVsReference : public ::testing::TestWithParam<RopeCase> {};

TEST_P(RopeVsReference, MatchesFloat64AtShortAndLongPositions) {
  const RopeCase rc = GetParam();
  ModelConfig c = rope_config(rc.style, rc.head_dim, rc.n_rot, 500000.0f);
  if (rc.linear_factor != 1.0f) {
    c.rope_scaling.kind = RopeScaling::Kind::kLinear;
    c.rope_scaling.factor = rc.linear_factor;
  }
  std::vector<float> factors;
  if (rc.factors) {
    for (int i = 0; i < rc.n_rot / 2; ++i)
      factors.push_back(1.0f + 0.37f * static_cast<float>(i % 5));
  }
  const Rope rope(c, factors);
  const int n_heads = 3;
  const std::vector<float> x = random_vector(static_cast<size_t>(n_heads * rc.head_dim), 11);
  std::vector<float> cs(static_cast<size_t>(rc.n_rot));
  for (int64_t pos : {int64_t{0}, int64_t{1}, int64_t{17}, int64_t{4095}, int64_t{131071}}) {
    std::vector<float> y(x.size(), NAN);
    y = x;
    std::fill(cs.begin(), cs.end(), NAN);
    rope.angles(pos, cs.data());
    rope.apply(y.data(), n_heads, rc.head_dim, cs.data());
    const std::vector<double> ref =
        reference_rope(x, n_heads, rc.head_dim, rc.n_rot, 500000.0, pos,
                       rc.style == RopeStyle::kNeox, factors, 1.0 / rc.linear_factor);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(y[i], ref[i], 1e-5) << "pos " << pos << " element " << i;
    }
    if (pos == 0) {
      for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], x[i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Styles, RopeVsReference,
                         ::testing::Values(RopeCase{RopeStyle::kNormal, 64, 64, false, 1.0f},
                                           RopeCase{RopeStyle::kNeox, 64, 64, false, 1.0f},
                                           RopeCase{RopeStyle::kNormal, 128, 128, true, 1.0f},
                                           RopeCase{RopeStyle::kNeox, 128, 128, true, 1.0f},
                                           RopeCase{RopeStyle::kNormal, 64, 32, false, 4.0f},
                                           RopeCase{RopeStyle::kNeox, 64, 32, true, 1.0f}));

TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
  const ModelConfig c = rope_config(RopeStyle::kNormal, 64, 64, 10000.0f);
  const Rope rope(c, {});
  const std::vector<float> q = random_vector(64, 1), k = random_vector(64, 2);
  auto rotated_dot = [&](int64_t pq, int64_t pk) {
    std::vector<float> a = q, b = k, cs(64);
    rope.angles(pq, cs.data());
    rope.apply(a.data(), 1, 64, cs.data());
    rope.angles(pk, cs.data());
    rope.apply(b.data(), 1, 64, cs.data());
    double s = 0;
    for (int i = 0; i < 64; ++i) s += static_cast<double>(a[i]) * b[i];
    return s;
  };
  const double d0 = rotated_dot(10, 3);
  EXPECT_NEAR(rotated_dot(110, 103), d0, 1e-4);
  EXPECT_NEAR(rotated_dot(1007, 1000), d0, 1e-4);
  EXPECT_GT(std::abs(rotated_dot(10, 9) - d0), 1e-2);  // another distance gives another value
}

TEST(Rope, Llama3FrequencyFactorsFollowTheDefinition) {
  RopeScaling s;
  s.kind = RopeScaling::Kind::kLlama3;
  s.factor = 8.0f;
  s.low_freq_factor = 1.0f;
  s.high_freq_factor = 4.0f;
  s.original_context = 8192;
  const int n_rot = 128;
  const std::vector<float> f = llama3_rope_freq_factors(s, 500000.0f, n_rot);
  ASSERT_EQ(f.size(), 64u);
  int ones = 0, full = 0, blended = 0;
  for (int i = 0; i < 64; ++i) {
    // Independent restatement: wavelength against the original context's bands.
    const double wavelen = 2.0 * std::numbers::pi * std::pow(500000.0, 2.0 * i / n_rot);
    double expect;
    if (wavelen < 8192.0 / 4.0) {
      expect = 1.0, ++ones;
    } else if (wavelen > 8192.0 / 1.0) {
      expect = 8.0, ++full;
    } else {
      const double t = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
      expect = 1.0 / ((1.0 - t) / 8.0 + t), ++blended;
    }
    EXPECT_NEAR(f[static_cast<size_t>(i)], expect, 1e-5 * expect) << i;
    if (i > 0) EXPECT_GE(f[static_cast<size_t>(i)], f[static_cast<size_t>(i) - 1]);
  }
  // All three bands occur for Llama-3.1's parameters.
  EXPECT_GT(ones, 0);
  EXPECT_GT(full, 0);
  EXPECT_GT(blended, 0);
  EXPECT_FLOAT_EQ(f.front(), 1.0f);
  EXPECT_FLOAT_EQ(f.back(), 8.0f);
}

// Attention in double over K/V given per position, from the definition.
std::vector<double> reference_attention(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, int n_q, int pos0, int n_head,
                                        int n_kv, int hd, bool round_f16) {
  auto kv = [&](const std::vector<float>& src, int pos, int h, int i) {
    const float x = src[static_cast<size_t>((pos * n_kv + h) * hd + i)];
    return round_f16 ? static_cast<double>(fp16_to_fp32(fp32_to_fp16(x))) : static_cast<double>(x);
  };
  std::vector<double> out(static_cast<size_t>(n_q * n_head * hd), 0.0);
  for (int t = 0; t < n_q; ++t) {
    for (int h = 0; h < n_head; ++h) {
      const int g = h / (n_head / n_kv);
      const int n_pos = pos0 + t + 1;
      std::vector<double> s(static_cast<size_t>(n_pos));
      double max = -INFINITY, sum = 0.0;
      for (int j = 0; j < n_pos; ++j) {
        double d = 0.0;
        for (int i = 0; i < hd; ++i)
          d += q[static_cast<size_t>((t * n_head + h) * hd + i)] * kv(k, j, g, i);
        s[static_cast<size_t>(j)] = d / std::sqrt(static_cast<double>(hd));
        max = std::max(max, s[static_cast<size_t>(j)]);
      }
      for (double& e : s) sum += (e = std::exp(e - max));
      for (int j = 0; j < n_pos; ++j) {
        for (int i = 0; i < hd; ++i) {
          out[static_cast<size_t>((t * n_head + h) * hd + i)] +=
              s[static_cast<size_t>(j)] / sum * kv(v, j, g, i);
        }
      }
    }
  }
  return out;
}

struct AttentionCase {
  int n_head, n_kv, head_dim;
  KvCacheType type;
};

class AttentionVsReference : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionVsReference, CausalGqaMatchesFloat64) {
  const AttentionCase ac = GetParam();
  const int pos0 = 6, n_q = 5, n_pos = pos0 + n_q, hd = ac.head_dim;
  KvCache cache(2, ac.n_kv, hd, 16, ac.type);
  // Scale 2 makes the softmax far from uniform, so a wrong mask or head mapping shows.
  const std::vector<float> k = random_vector(static_cast<size_t>(n_pos * ac.n_kv * hd), 3, 2.0f);
  const std::vector<float> v = random_vector(static_cast<size_t>(n_pos * ac.n_kv * hd), 4);
  const std::vector<float> q = random_vector(static_cast<size_t>(n_q * ac.n_head * hd), 5, 2.0f);
  for (int p = 0; p < n_pos; ++p) {
    const size_t off = static_cast<size_t>(p * ac.n_kv * hd);
    cache.store(1, p, k.data() + off, v.data() + off);
  }
  cache.set_size(n_pos);
  const std::vector<double> ref =
      reference_attention(q, k, v, n_q, pos0, ac.n_head, ac.n_kv, hd, ac.type == KvCacheType::kF16);
  std::vector<float> first;
  for (int threads : {1, 3}) {
    cpu::ThreadPool pool(threads);
    std::vector<float> out(q.size(), NAN);
    causal_attention(pool, cache, 1, q.data(), n_q, pos0, ac.n_head, out.data());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 2e-5) << i;
    if (first.empty())
      first = out;
    else
      EXPECT_EQ(out, first) << "results depend on the thread count";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionVsReference,
                         ::testing::Values(AttentionCase{8, 2, 64, KvCacheType::kF32},
                                           AttentionCase{4, 4, 64, KvCacheType::kF32},
                                           AttentionCase{6, 1, 32, KvCacheType::kF32},
                                           AttentionCase{8, 2, 128, KvCacheType::kF16},
                                           AttentionCase{3, 3, 20, KvCacheType::kF16}));

TEST(Attention, RefusesPositionsTheCacheDoesNotHold) {
  KvCache cache(1, 1, 8, 4, KvCacheType::kF32);
  cache.set_size(2);
  std::vector<float> q(8 * 3, 1.0f), out(8 * 3);
  cpu::ThreadPool pool(1);
  EXPECT_THROW(causal_attention(pool, cache, 0, q.data(), 3, 0, 1, out.data()), UsageError);
}

TEST(KvCache, StoresF16AndF32RowsPerHead) {
  for (KvCacheType type : {KvCacheType::kF16, KvCacheType::kF32}) {
    KvCache cache(2, 3, 8, 5, type);
    EXPECT_EQ(cache.bytes(), 2ull * 2 * 3 * 8 * 5 * (type == KvCacheType::kF16 ? 2 : 4));
    const std::vector<float> k = random_vector(24, 7), v = random_vector(24, 8);
    cache.store(1, 4, k.data(), v.data());
    for (int h = 0; h < 3; ++h) {
      for (int i = 0; i < 8; ++i) {
        const size_t at = static_cast<size_t>(4 * 8 + i);
        const float want_k = k[static_cast<size_t>(h * 8 + i)],
                    want_v = v[static_cast<size_t>(h * 8 + i)];
        float got_k, got_v;
        if (type == KvCacheType::kF16) {
          got_k = fp16_to_fp32(static_cast<const uint16_t*>(cache.k_head(1, h))[at]);
          got_v = fp16_to_fp32(static_cast<const uint16_t*>(cache.v_head(1, h))[at]);
          EXPECT_EQ(got_k, fp16_to_fp32(fp32_to_fp16(want_k)));
          EXPECT_EQ(got_v, fp16_to_fp32(fp32_to_fp16(want_v)));
        } else {
          got_k = static_cast<const float*>(cache.k_head(1, h))[at];
          got_v = static_cast<const float*>(cache.v_head(1, h))[at];
          EXPECT_EQ(got_k, want_k);
          EXPECT_EQ(got_v, want_v);
        }
      }
    }
    EXPECT_THROW(cache.store(0, 5, k.data(), v.data()), UsageError);
    cache.set_size(3);
    cache.truncate(1);
    EXPECT_EQ(cache.size(), 1);
    EXPECT_THROW(cache.truncate(2), UsageError);
    EXPECT_THROW(cache.set_size(6), UsageError);
  }
  EXPECT_THROW(KvCache(0, 1, 8, 4), UsageError);
}

}  // namespace
}  // namespace nvhcq::llm
