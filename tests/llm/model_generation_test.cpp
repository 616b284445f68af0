// The model as a whole: determinism across runs and thread counts, the KV cache
// (prefill then decode == one full pass), batching, the generation loop's stop
// conditions, and errors a forward pass must refuse.

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "base/error.h"
#include "llm/model/generator.h"
#include "llm/model/llama_model.h"
#include "llm/tokenizer/tokenizer.h"
#include "model_test_models.h"

namespace nvhcq::llm {
namespace {

const std::vector<int32_t> kPrompt = {1019, 5, 300, 17, 999, 42, 512, 77, 800, 3, 640, 128, 64};

std::vector<int32_t> greedy_tokens(LlamaModel& model, int threads, int n,
                                   std::vector<float>* last_logits = nullptr) {
  KvCache cache = model.make_cache(64);
  cpu::ThreadPool pool(threads);
  SamplerParams sp;
  sp.temperature = 0.0f;
  Sampler sampler(sp);
  std::vector<int32_t> out;
  GenerationOptions go;
  go.max_tokens = n;
  generate(model, cache, pool, sampler, kPrompt, go, [&](int32_t id) {
    out.push_back(id);
    return true;
  });
  if (last_logits != nullptr) {
    // The logits of the whole generated sequence's last position, for bitwise comparison.
    std::vector<int32_t> all = kPrompt;
    all.insert(all.end(), out.begin(), out.end());
    KvCache c2 = model.make_cache(64);
    model.forward(all, c2, pool, *last_logits);
  }
  return out;
}

TEST(ModelGeneration, GreedyTokensAreTheSameOnEveryRunAndThreadCount) {
  for (LlamaFtype ftype : {LlamaFtype::ALL_F32, LlamaFtype::MOSTLY_Q4_K_M}) {
    LlamaModel model(GgufFile::open(model_test::tiny_model("llama", ftype)));
    std::vector<float> logits1, logits3;
    const std::vector<int32_t> first = greedy_tokens(model, 1, 24, &logits1);
    ASSERT_EQ(first.size(), 24u);
    EXPECT_EQ(greedy_tokens(model, 1, 24), first);
    EXPECT_EQ(greedy_tokens(model, 2, 24), first);
    EXPECT_EQ(greedy_tokens(model, 3, 24, &logits3), first);
    // Bitwise: every output is the same dot product whichever thread computes it.
    EXPECT_EQ(logits1, logits3);
    // A random model must still say something varied, and nothing is NaN.
    const std::set<int32_t> distinct(first.begin(), first.end());
    EXPECT_GE(distinct.size(), 6u) << "the synthetic model repeats itself";
    for (float l : logits1) ASSERT_TRUE(std::isfinite(l));
  }
}

TEST(ModelGeneration, PrefillThenDecodeEqualsOneFullPass) {
  LlamaModel model(GgufFile::open(model_test::tiny_model("llama", LlamaFtype::MOSTLY_Q8_0)));
  const size_t vocab = model.config().n_vocab;
  cpu::ThreadPool pool(2);
  std::vector<float> full;
  KvCache whole = model.make_cache(32);
  model.forward(kPrompt, whole, pool, full, /*all_logits=*/true);
  EXPECT_EQ(whole.size(), static_cast<int>(kPrompt.size()));

  for (size_t split : {size_t{1}, size_t{5}, size_t{12}}) {
    KvCache cache = model.make_cache(32);
    std::vector<float> logits(vocab, NAN);
    model.forward(std::span(kPrompt).first(split), cache, pool, logits);
    for (size_t t = split; t < kPrompt.size(); ++t) {
      // The logits of position t-1, already in `logits`, must equal the full pass's.
      for (size_t i = 0; i < vocab; ++i) {
        ASSERT_NEAR(logits[i], full[(t - 1) * vocab + i],
                    1e-5f * (1.0f + std::abs(full[(t - 1) * vocab + i])))
            << "split " << split << " position " << t - 1;
      }
      model.forward(std::span(kPrompt).subspan(t, 1), cache, pool, logits);
    }
    for (size_t i = 0; i < vocab; ++i) {
      ASSERT_NEAR(logits[i], full[(kPrompt.size() - 1) * vocab + i],
                  1e-5f * (1.0f + std::abs(logits[i])));
    }
  }

  // Internal batches of 4 tokens give the same logits as one batch.
  model.set_max_batch(4);
  KvCache cache = model.make_cache(32);
  std::vector<float> batched;
  model.forward(kPrompt, cache, pool, batched, true);
  model.set_max_batch(256);
  ASSERT_EQ(batched.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i)
    ASSERT_NEAR(batched[i], full[i], 1e-5f * (1.0f + std::abs(full[i])));
}

TEST(ModelGeneration, ForwardRefusesWhatItCannotDoAndKeepsTheCache) {
  LlamaModel model(GgufFile::open(model_test::tiny_model()));
  cpu::ThreadPool pool(1);
  std::vector<float> logits;
  KvCache cache = model.make_cache(8);
  model.forward(std::span(kPrompt).first(6), cache, pool, logits);
  EXPECT_THROW(model.forward(std::span(kPrompt).first(3), cache, pool, logits), UsageError);
  EXPECT_EQ(cache.size(), 6);
  const std::vector<int32_t> bad = {5, 1024};
  EXPECT_THROW(model.forward(bad, cache, pool, logits), UsageError);
  const std::vector<int32_t> negative = {-1};
  EXPECT_THROW(model.forward(negative, cache, pool, logits), UsageError);
  EXPECT_EQ(cache.size(), 6);
  EXPECT_THROW(model.forward({}, cache, pool, logits), UsageError);
  KvCache foreign(3, 2, 64, 8);
  EXPECT_THROW(model.forward(std::span(kPrompt).first(1), foreign, pool, logits), UsageError);
  // Still usable after the refusals.
  model.forward(std::span(kPrompt).subspan(6, 2), cache, pool, logits);
  EXPECT_EQ(cache.size(), 8);
}

TEST(ModelGeneration, GenerationStopsAtEndTokenLimitAndFullContext) {
  LlamaModel model(GgufFile::open(model_test::tiny_model()));
  cpu::ThreadPool pool(2);
  SamplerParams sp;
  sp.temperature = 0.0f;
  auto run = [&](int capacity, int max_tokens, std::function<bool(int32_t)> is_end,
                 std::function<bool(int32_t)> on_token, std::vector<int32_t>* out) {
    KvCache cache = model.make_cache(capacity);
    Sampler sampler(sp);
    GenerationOptions go;
    go.max_tokens = max_tokens;
    go.is_end = std::move(is_end);
    return generate(model, cache, pool, sampler, kPrompt, go, [&](int32_t id) {
      out->push_back(id);
      return on_token(id);
    });
  };
  auto yes = [](int32_t) { return true; };
  std::vector<int32_t> ref;
  GenerationStats st = run(64, 10, {}, yes, &ref);
  EXPECT_EQ(st.stop, GenerationStats::Stop::kTokenLimit);
  EXPECT_EQ(st.generated_tokens, 10);
  EXPECT_EQ(st.decode_passes, 9);
  EXPECT_EQ(st.prompt_tokens, static_cast<int>(kPrompt.size()));
  EXPECT_GT(st.prompt_tokens_per_second(), 0.0);

  // The fourth greedy token as an end token: three tokens come out.
  std::vector<int32_t> got;
  const int32_t end = ref[3];
  st = run(
      64, 10, [&](int32_t id) { return id == end; }, yes, &got);
  EXPECT_EQ(st.stop, GenerationStats::Stop::kEndToken);
  const size_t first_end =
      static_cast<size_t>(std::find(ref.begin(), ref.end(), end) - ref.begin());
  EXPECT_EQ(
      got, std::vector<int32_t>(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(first_end)));

  got.clear();
  st = run(static_cast<int>(kPrompt.size()) + 3, 10, {}, yes, &got);
  EXPECT_EQ(st.stop, GenerationStats::Stop::kContextFull);
  EXPECT_EQ(got, std::vector<int32_t>(ref.begin(), ref.begin() + 4));

  got.clear();
  st = run(
      64, 10, {}, [&](int32_t) { return got.size() < 2; }, &got);
  EXPECT_EQ(st.stop, GenerationStats::Stop::kCaller);
  EXPECT_EQ(got.size(), 2u);
}

TEST(ModelGeneration, ReadsHyperparametersAndVariantsFromTheFile) {
  LlamaModel llama(GgufFile::open(model_test::tiny_model()));
  const ModelConfig& c = llama.config();
  EXPECT_EQ(c.arch, ModelArch::kLlama);
  EXPECT_EQ(c.n_layer, 2u);
  EXPECT_EQ(c.n_embd, 256u);
  EXPECT_EQ(c.n_head, 4u);
  EXPECT_EQ(c.n_head_kv, 2u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.n_ff, 768u);
  EXPECT_EQ(c.n_vocab, 1024u);
  EXPECT_EQ(c.rope_style, RopeStyle::kNormal);
  EXPECT_FALSE(llama.weights().tied_output);
  EXPECT_TRUE(llama.weights().layers[0].bq.empty());
  EXPECT_TRUE(llama.weights().rope_freq_factors.empty());

  LlamaModel qwen(GgufFile::open(model_test::tiny_model("qwen2")));
  EXPECT_EQ(qwen.config().arch, ModelArch::kQwen2);
  EXPECT_EQ(qwen.config().rope_style, RopeStyle::kNeox);
  EXPECT_EQ(qwen.weights().layers[1].bq.size(), 256u);
  EXPECT_EQ(qwen.weights().layers[1].bk.size(), 128u);
  EXPECT_EQ(qwen.weights().layers[1].bv.size(), 128u);

  LlamaModel l3(GgufFile::open(model_test::tiny_model("llama", LlamaFtype::ALL_F32, true)));
  RopeScaling s;
  s.kind = RopeScaling::Kind::kLlama3;
  s.factor = 8.0f;
  EXPECT_EQ(l3.weights().rope_freq_factors, llama3_rope_freq_factors(s, 10000.0f, 64));
  EXPECT_EQ(l3.weights().rope_freq_factors.back(), 8.0f);
}

TEST(ModelGeneration, TokenizerOfASynthModelRoundTripsAndEndsWithItsEos) {
  const GgufFile file = GgufFile::open(model_test::tiny_model());
  const Tokenizer tok = Tokenizer::from_gguf(file);
  EXPECT_EQ(tok.vocab_size(), 1024u);
  const std::string text = "Once upon a time, the model read 42 words.";
  const std::vector<int32_t> ids = tok.encode(text, true, false);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), tok.bos());
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_LT(ids.size(), text.size() * 3 / 5) << "learned merges should shorten English text";
  EXPECT_TRUE(tok.is_eog(tok.eos()));
  EXPECT_TRUE(tok.is_eog(tok.find_token("<|eot_id|>")));
}

}  // namespace
}  // namespace nvhcq::llm
