// The sampler: each strategy on logits with known probabilities, the draw's
// distribution, determinism for a seed, and edge cases.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "base/error.h"
#include "llm/sampler/sampler.h"

namespace nvhcq::llm {
namespace {

// Logits whose softmax is exactly `probs` (log-probabilities).
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

SamplerParams plain(float temp, uint64_t seed = 1) {
  SamplerParams p;
  p.temperature = temp;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.0f;
  p.seed = seed;
  return p;
}

std::set<int32_t> candidate_ids(const Sampler& s) {
  std::set<int32_t> ids;
  for (const auto& c : s.last_candidates()) ids.insert(c.id);
  return ids;
}

TEST(Sampler, GreedyTakesTheHighestLogitAndTheLowestIdOnTies) {
  Sampler s(plain(0.0f));
  EXPECT_EQ(s.sample(std::vector<float>{0.1f, 2.5f, -1.0f, 2.4f}), 1);
  EXPECT_EQ(s.sample(std::vector<float>{3.0f, 1.0f, 3.0f}), 0);
  EXPECT_EQ(s.sample(std::vector<float>{-5.0f, -4.0f, -4.5f}), 1);
  // Greedy never draws: any seed gives the same.
  Sampler t(plain(-1.0f, 99));
  EXPECT_EQ(t.sample(std::vector<float>{0.1f, 2.5f, -1.0f, 2.4f}), 1);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  p.repeat_last_n = 2;
  Sampler s(p);
  const std::vector<float> logits = {3.0f, 2.0f, -1.0f, -0.6f};
  EXPECT_EQ(s.sample(logits), 0);
  s.accept(0);  // token 0's 3.0 becomes 1.5: token 1 (2.0) wins
  EXPECT_EQ(s.sample(logits), 1);
  EXPECT_FLOAT_EQ(s.last_candidates()[0].logit, 2.0f);
  s.accept(1);  // both penalized: 1.5 vs 1.0, token 0 wins again
  EXPECT_EQ(s.sample(logits), 0);
  s.accept(3);  // the window holds {1, 3}: token 0 is free again; -0.6 becomes -1.2
  EXPECT_EQ(s.sample(logits), 0);

  // Negative logits get more negative: with everything else lower, -0.6 * 2 < -1.0.
  SamplerParams q = plain(0.0f);
  q.repeat_penalty = 2.0f;
  Sampler n(q);
  const std::vector<float> neg = {-5.0f, -5.0f, -1.0f, -0.6f};
  EXPECT_EQ(n.sample(neg), 3);
  n.accept(3);
  EXPECT_EQ(n.sample(neg), 2);
  // Repeated tokens count once.
  n.accept(3);
  n.accept(3);
  EXPECT_EQ(n.sample(neg), 2);
}

TEST(Sampler, TopKKeepsTheKBest) {
  SamplerParams p = plain(1.0f);
  p.top_k = 2;
  Sampler s(p);
  const std::vector<float> logits = {0.0f, 5.0f, 1.0f, 4.0f, -2.0f};
  for (int i = 0; i < 50; ++i) {
    const int32_t id = s.sample(logits);
    EXPECT_TRUE(id == 1 || id == 3) << id;
  }
  EXPECT_EQ(candidate_ids(s), (std::set<int32_t>{1, 3}));
  // k = 1 is greedy whatever the temperature.
  p.top_k = 1;
  p.temperature = 5.0f;
  Sampler one(p);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(one.sample(logits), 1);
  // k beyond the vocabulary keeps everything.
  p.top_k = 100;
  Sampler all(p);
  all.sample(logits);
  EXPECT_EQ(all.last_candidates().size(), 5u);
}

TEST(Sampler, TopPKeepsTheSmallestHeadReachingP) {
  const std::vector<float> logits = logits_of({0.1, 0.4, 0.05, 0.3, 0.15});
  SamplerParams p = plain(1.0f);
  p.top_p = 0.7f;  // 0.4 + 0.3 = 0.7 reaches it
  Sampler s(p);
  s.sample(logits);
  EXPECT_EQ(candidate_ids(s), (std::set<int32_t>{1, 3}));
  p.top_p = 0.75f;  // needs the third: 0.15
  Sampler t(p);
  t.sample(logits);
  EXPECT_EQ(candidate_ids(t), (std::set<int32_t>{1, 3, 4}));
  p.top_p = 0.01f;  // never fewer than one
  Sampler u(p);
  EXPECT_EQ(u.sample(logits), 1);
  EXPECT_EQ(u.last_candidates().size(), 1u);
}

TEST(Sampler, MinPDropsTokensFarBelowTheBest) {
  const std::vector<float> logits = logits_of({0.1, 0.4, 0.05, 0.3, 0.15});
  SamplerParams p = plain(1.0f);
  p.min_p = 0.3f;  // threshold 0.12: keeps 0.4, 0.3, 0.15
  Sampler s(p);
  s.sample(logits);
  EXPECT_EQ(candidate_ids(s), (std::set<int32_t>{1, 3, 4}));
  p.min_p = 0.8f;  // threshold 0.32: only the best
  Sampler t(p);
  EXPECT_EQ(t.sample(logits), 1);
}

TEST(Sampler, DrawsFollowTheTemperatureScaledDistribution) {
  const std::vector<double> probs = {0.5, 0.3, 0.15, 0.05};
  const std::vector<float> logits = logits_of(probs);
  for (float temp : {1.0f, 0.5f, 2.0f}) {
    Sampler s(plain(temp, 1234));
    std::map<int32_t, int> counts;
    const int n = 40000;
    for (int i = 0; i < n; ++i) ++counts[s.sample(logits)];
    // Expected: p_i^(1/T) normalized.
    double z = 0;
    for (double p : probs) z += std::pow(p, 1.0 / temp);
    for (size_t i = 0; i < probs.size(); ++i) {
      const double expect = std::pow(probs[i], 1.0 / temp) / z;
      const double got = counts[static_cast<int32_t>(i)] / static_cast<double>(n);
      // Five standard errors of a binomial proportion.
      EXPECT_NEAR(got, expect, 5.0 * std::sqrt(expect * (1 - expect) / n) + 1e-4)
          << "temperature " << temp << " token " << i;
    }
    double sum = 0;
    for (const auto& c : s.last_candidates()) sum += c.p;
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(Sampler, TheSameSeedGivesTheSameTokensAndResetRestarts) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(std::sin(i * 0.7) * 3.0);
  SamplerParams p;  // the defaults: top-k 40, top-p 0.95, min-p 0.05, temp 0.8
  p.seed = 42;
  Sampler a(p), b(p);
  std::vector<int32_t> ta, tb;
  for (int i = 0; i < 200; ++i) {
    ta.push_back(a.sample(logits));
    tb.push_back(b.sample(logits));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_GE(std::set<int32_t>(ta.begin(), ta.end()).size(), 5u);
  a.reset();
  std::vector<int32_t> again;
  for (int i = 0; i < 200; ++i) again.push_back(a.sample(logits));
  EXPECT_EQ(again, ta);
  p.seed = 43;
  Sampler c(p);
  std::vector<int32_t> tc;
  for (int i = 0; i < 200; ++i) tc.push_back(c.sample(logits));
  EXPECT_NE(tc, ta);
  // The generator is specified (xoshiro256** seeded through splitmix64), so a seed's
  // stream is the same on every platform; values from an independent implementation.
  SamplerRng rng(42);
  EXPECT_EQ(rng.next(), 0x15780b2e0c2ec716ull);
  EXPECT_EQ(rng.next(), 0x6104d9866d113a7eull);
  EXPECT_EQ(rng.next(), 0xae17533239e499a1ull);
}

TEST(Sampler, EdgeCases) {
  Sampler s(plain(0.8f));
  EXPECT_THROW(s.sample(std::vector<float>{}), UsageError);
  EXPECT_EQ(s.sample(std::vector<float>{1.5f}), 0);  // a vocabulary of one
  // NaN is never chosen, -inf neither while anything finite exists.
  for (int i = 0; i < 50; ++i) {
    const int32_t id = s.sample(std::vector<float>{NAN, -INFINITY, 0.0f, NAN});
    EXPECT_EQ(id, 2);
  }
  // All -inf: a token still comes out, deterministically the first.
  EXPECT_EQ(s.sample(std::vector<float>{-INFINITY, -INFINITY}), 0);
  Sampler g(plain(0.0f));
  EXPECT_EQ(g.sample(std::vector<float>{NAN, 1.0f, NAN}), 1);
  // A huge logit does not overflow the softmax.
  EXPECT_EQ(s.sample(std::vector<float>{1e30f, 0.0f}), 0);
}

TEST(Sampler, RejectsParametersOutOfRange) {
  auto bad = [](auto edit) {
    SamplerParams p;
    edit(p);
    return p;
  };
  EXPECT_THROW(Sampler(bad([](SamplerParams& p) { p.top_p = 0.0f; })), UsageError);
  EXPECT_THROW(Sampler(bad([](SamplerParams& p) { p.top_p = 1.5f; })), UsageError);
  EXPECT_THROW(Sampler(bad([](SamplerParams& p) { p.min_p = -0.1f; })), UsageError);
  EXPECT_THROW(Sampler(bad([](SamplerParams& p) { p.repeat_penalty = 0.0f; })), UsageError);
  EXPECT_THROW(Sampler(bad([](SamplerParams& p) { p.temperature = NAN; })), UsageError);
  EXPECT_THROW(Sampler(bad([](SamplerParams& p) { p.repeat_last_n = -1; })), UsageError);
  EXPECT_NO_THROW(Sampler(bad([](SamplerParams& p) { p.top_p = 1.0f; })));
}

}  // namespace
}  // namespace nvhcq::llm
