// The CPU forward pass of llm/model against an independent float64 forward pass
// (model_reference_forward.cpp) on tiny synthetic models, per weight type.
//
// Error figure: for each position, max_i |logit_i - ref_i| / max_i |ref_i|; the
// tests assert the worst of 13 positions. Two comparisons per type:
//  - "same inputs": the reference rounds each weight product's input as the CPU
//    does (to the weight format's activation type: Q8_0, Q8_K, F16, BF16) and the
//    K/V to f16 where the cache is f16. Then only float32 arithmetic differs:
//    bound 1e-4 for f32, q8_0 and q4_k_m (measured 3e-7 to 7e-7). For f16 and bf16
//    the bound is 2e-3 / 1e-2: their rounding step is so fine that float-vs-double
//    differences of 1e-7 move a few of the ~40000 rounded values to the next f16
//    (bf16) value, and one such step in the final norm's output shifts logits by
//    ~1e-3 (measured 8e-4 / 2e-3).
//  - "exact inputs": the reference uses unrounded activations, i.e. the error
//    is what the activation formats cost: f32 1e-4; f16 5e-3; bf16 2e-2;
//    q8_0 and q4_k_m 6e-2 (measured 1e-3, 6e-3, 2.2e-2 and 3.5e-2).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "llm/model/llama_model.h"
#include "model_reference_forward.h"
#include "model_test_models.h"

namespace nvhcq::llm {
namespace {

const std::vector<int32_t> kPrompt = {1019, 5, 300, 17, 999, 42, 512, 77, 800, 3, 640, 128, 64};

// The worst per-position relative error of `got` against `ref` (both token-major).
double worst_relative_error(const std::vector<float>& got, const std::vector<double>& ref,
                            size_t vocab) {
  double worst = 0.0;
  for (size_t t = 0; t * vocab < ref.size(); ++t) {
    double max_ref = 0.0, max_diff = 0.0;
    for (size_t i = 0; i < vocab; ++i) {
      const double r = ref[t * vocab + i];
      max_ref = std::max(max_ref, std::abs(r));
      max_diff = std::max(max_diff, std::abs(static_cast<double>(got[t * vocab + i]) - r));
    }
    worst = std::max(worst, max_diff / max_ref);
  }
  return worst;
}

struct Case {
  const char* arch;
  LlamaFtype ftype;
  KvCacheType kv;
  double bound_same_inputs;
  double bound_exact_inputs;
  bool llama3_rope = false;
};

class ModelForwardVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(ModelForwardVsReference, LogitsMatchFloat64) {
  const Case c = GetParam();
  const std::string& path = model_test::tiny_model(c.arch, c.ftype, c.llama3_rope);
  LlamaModel model(GgufFile::open(path));
  KvCache cache = model.make_cache(32, c.kv);
  cpu::ThreadPool pool(2);
  std::vector<float> logits(kPrompt.size() * model.config().n_vocab, NAN);  // poisoned
  model.forward(kPrompt, cache, pool, logits, /*all_logits=*/true);
  ASSERT_EQ(logits.size(), kPrompt.size() * model.config().n_vocab);

  const model_test::ReferenceModel ref(GgufFile::open(path));
  const std::string what = std::string(c.arch) + (c.llama3_rope ? " (llama3 rope)" : "") + " " +
                           std::string(llama_ftype_name(c.ftype)) + ", " +
                           (c.kv == KvCacheType::kF16 ? "f16" : "f32") + " KV cache";
  model_test::ReferenceOptions ro;
  ro.round_kv_to_f16 = c.kv == KvCacheType::kF16;
  ro.round_activations = true;
  const double err_same =
      worst_relative_error(logits, ref.forward(kPrompt, ro), model.config().n_vocab);
  ro.round_activations = false;
  const std::vector<double> expected = ref.forward(kPrompt, ro);
  const double err_exact = worst_relative_error(logits, expected, model.config().n_vocab);
  std::printf(
      "[ figure ] %s: worst relative logit error %.3g with the same rounded inputs (bound %.0e), "
      "%.3g with exact inputs (bound %.0e)\n",
      what.c_str(), err_same, c.bound_same_inputs, err_exact, c.bound_exact_inputs);
  EXPECT_LE(err_same, c.bound_same_inputs) << what;
  EXPECT_LE(err_exact, c.bound_exact_inputs) << what;
  // The logits are not degenerate: they spread over several units.
  const auto [lo, hi] = std::minmax_element(expected.begin(), expected.end());
  EXPECT_GT(*hi - *lo, 5.0);
}

INSTANTIATE_TEST_SUITE_P(
    Types, ModelForwardVsReference,
    ::testing::Values(Case{"llama", LlamaFtype::ALL_F32, KvCacheType::kF32, 1e-4, 1e-4},
                      Case{"llama", LlamaFtype::ALL_F32, KvCacheType::kF16, 1e-4, 1e-4},
                      Case{"llama", LlamaFtype::ALL_F32, KvCacheType::kF32, 1e-4, 1e-4, true},
                      Case{"qwen2", LlamaFtype::ALL_F32, KvCacheType::kF32, 1e-4, 1e-4},
                      Case{"mistral", LlamaFtype::ALL_F32, KvCacheType::kF32, 1e-4, 1e-4},
                      Case{"llama", LlamaFtype::MOSTLY_F16, KvCacheType::kF16, 2e-3, 5e-3},
                      Case{"llama", LlamaFtype::MOSTLY_BF16, KvCacheType::kF16, 1e-2, 2e-2},
                      Case{"llama", LlamaFtype::MOSTLY_Q8_0, KvCacheType::kF16, 1e-4, 6e-2},
                      Case{"llama", LlamaFtype::MOSTLY_Q4_K_M, KvCacheType::kF16, 1e-4, 6e-2}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = std::string(info.param.arch) + "_" +
                         std::string(llama_ftype_name(info.param.ftype)) +
                         (info.param.kv == KvCacheType::kF16 ? "_kv_f16" : "_kv_f32") +
                         (info.param.llama3_rope ? "_llama3_rope" : "");
      return name;
    });

}  // namespace
}  // namespace nvhcq::llm
