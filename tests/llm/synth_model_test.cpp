// nvhcq synth's library: seeded and thread-count-independent files, llama.cpp's
// quantization mixes, preset shapes, weight scales and the two tokenizer sources.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/gguf/gguf_file_writer.h"
#include "llm/quant/quant_registry.h"
#include "llm/synth/model_synthesizer.h"
#include "llm/synth/synth_tokenizer.h"
#include "llm/synth/tensor_streamer.h"
#include "llm/tokenizer/tokenizer.h"
#include "model_test_models.h"

namespace nvhcq::llm {
namespace {

std::string vocab_file(const std::string& name) {
  return std::string(NVHCQ_SOURCE_DIR) + "/tests/data/vocab/ggml-vocab-" + name + ".gguf";
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string synth(const std::string& name, LlamaFtype ftype, uint64_t seed, int threads,
                  const std::string& vocab = "", const std::string& arch = "llama") {
  SynthOptions o;
  o.arch = arch;
  o.preset = *find_synth_preset("tiny");
  o.ftype = ftype;
  o.seed = seed;
  o.vocab_path = vocab;
  o.output_path = model_test::temp_path(name);
  cpu::ThreadPool pool(threads);
  synthesize_model(o, pool);
  return o.output_path;
}

TEST(SynthModel, TheSeedAloneDecidesTheFile) {
  const std::vector<uint8_t> a =
      read_bytes(synth("seed3-t1.gguf", LlamaFtype::MOSTLY_Q4_K_M, 3, 1));
  const std::vector<uint8_t> b =
      read_bytes(synth("seed3-t2.gguf", LlamaFtype::MOSTLY_Q4_K_M, 3, 2));
  const std::vector<uint8_t> c =
      read_bytes(synth("seed4-t2.gguf", LlamaFtype::MOSTLY_Q4_K_M, 4, 2));
  ASSERT_GT(a.size(), 1000000u);
  EXPECT_TRUE(a == b) << "a different thread count changed the file";
  ASSERT_EQ(a.size(), c.size());
  EXPECT_FALSE(a == c) << "a different seed gave the same file";
}

TEST(SynthModel, TensorTypesFollowLlamaCppsMix) {
  const GgufFile f = GgufFile::open(model_test::tiny_model("llama", LlamaFtype::MOSTLY_Q4_K_M));
  EXPECT_EQ(f.metadata().get_u32("general.file_type"),
            static_cast<uint32_t>(LlamaFtype::MOSTLY_Q4_K_M));
  QuantMixModel mix;
  mix.n_layer = 2;
  mix.n_gqa = 2;
  mix.has_output = true;
  for (const GgufTensorInfo& t : f.tensors()) {
    const std::vector<int64_t> shape(t.dims.begin(), t.dims.end());
    EXPECT_EQ(t.type, llama_tensor_type(LlamaFtype::MOSTLY_Q4_K_M, t.name, shape, mix)) << t.name;
    if (t.dims.size() == 1) EXPECT_EQ(t.type, GgmlType::F32) << t.name;
  }
  // The facts of the Q4_K_M mix, stated directly: output in Q6_K, and attn_v /
  // ffn_down in Q6_K on llama.cpp's "more bits" layers (of 2: only the last).
  EXPECT_EQ(f.tensor_info("output.weight").type, GgmlType::Q6_K);
  EXPECT_EQ(f.tensor_info("token_embd.weight").type, GgmlType::Q4_K);
  EXPECT_EQ(f.tensor_info("blk.0.attn_q.weight").type, GgmlType::Q4_K);
  EXPECT_EQ(f.tensor_info("blk.0.attn_v.weight").type, GgmlType::Q4_K);
  EXPECT_EQ(f.tensor_info("blk.1.attn_v.weight").type, GgmlType::Q6_K);
  EXPECT_EQ(f.tensor_info("blk.0.ffn_down.weight").type, GgmlType::Q4_K);
  EXPECT_EQ(f.tensor_info("blk.1.ffn_down.weight").type, GgmlType::Q6_K);

  const GgufFile h = GgufFile::open(model_test::tiny_model("llama", LlamaFtype::MOSTLY_F16));
  for (const GgufTensorInfo& t : h.tensors()) {
    EXPECT_EQ(t.type, t.dims.size() == 2 ? GgmlType::F16 : GgmlType::F32) << t.name;
  }
}

TEST(SynthModel, PresetsHaveThePublishedShapes) {
  const auto p1 = *find_synth_preset("llama-3.2-1b");
  EXPECT_EQ(p1.n_embd, 2048u);
  EXPECT_EQ(p1.n_layer, 16u);
  EXPECT_EQ(p1.n_head, 32u);
  EXPECT_EQ(p1.n_head_kv, 8u);
  EXPECT_EQ(p1.n_ff, 8192u);
  EXPECT_EQ(p1.n_vocab, 128256u);
  EXPECT_TRUE(p1.tied_output);
  EXPECT_EQ(p1.rope_freq_base, 500000.0f);
  EXPECT_EQ(p1.llama3_factor, 32.0f);
  const auto p3 = *find_synth_preset("llama-3.2-3b");
  EXPECT_EQ(p3.n_embd, 3072u);
  EXPECT_EQ(p3.n_layer, 28u);
  EXPECT_EQ(p3.n_head, 24u);
  EXPECT_EQ(p3.n_head_kv, 8u);
  EXPECT_EQ(p3.n_ff, 8192u);
  EXPECT_EQ(p3.n_vocab, 128256u);
  EXPECT_TRUE(p3.tied_output);
  const auto p8 = *find_synth_preset("llama-3.1-8b");
  EXPECT_EQ(p8.n_embd, 4096u);
  EXPECT_EQ(p8.n_layer, 32u);
  EXPECT_EQ(p8.n_head, 32u);
  EXPECT_EQ(p8.n_head_kv, 8u);
  EXPECT_EQ(p8.n_ff, 14336u);
  EXPECT_EQ(p8.n_vocab, 128256u);
  EXPECT_FALSE(p8.tied_output);
  EXPECT_EQ(p8.llama3_factor, 8.0f);
  EXPECT_FALSE(find_synth_preset("llama-4-huge").has_value());
  for (const SynthPreset& p : synth_presets()) {
    EXPECT_EQ(p.n_embd % 256, 0u) << p.name << ": K-quant rows must be whole blocks";
    EXPECT_EQ(p.n_ff % 256, 0u) << p.name;
    EXPECT_EQ(p.n_head % p.n_head_kv, 0u) << p.name;
  }
}

TEST(SynthModel, WeightScalesKeepActivationsSane) {
  const GgufFile f = GgufFile::open(model_test::tiny_model());
  auto stats = [&](const std::string& name) {
    const GgufTensorInfo& t = f.tensor_info(name);
    const float* v = reinterpret_cast<const float*>(f.tensor_data(t).data());
    double sum = 0, sq = 0;
    for (uint64_t i = 0; i < t.n_elements; ++i) sum += v[i], sq += static_cast<double>(v[i]) * v[i];
    const double mean = sum / t.n_elements;
    return std::make_pair(mean, std::sqrt(sq / t.n_elements - mean * mean));
  };
  auto [qm, qs] = stats("blk.0.attn_q.weight");
  EXPECT_NEAR(qm, 0.0, 0.002);
  EXPECT_NEAR(qs, 1.0 / 16.0, 0.002);  // 1/sqrt(256 inputs)
  auto [dm, ds] = stats("blk.1.ffn_down.weight");
  EXPECT_NEAR(ds, 1.0 / std::sqrt(768.0), 0.002);
  auto [nm, ns] = stats("blk.0.attn_norm.weight");
  EXPECT_NEAR(nm, 1.0, 0.02);
  EXPECT_NEAR(ns, 0.1, 0.02);
  // Output rows of ordinary tokens: logits of standard deviation ~3 on unit-RMS input.
  const GgufTensorInfo& out = f.tensor_info("output.weight");
  const float* o = reinterpret_cast<const float*>(f.tensor_data(out).data());
  double sq = 0;
  for (int j = 0; j < 256; ++j)
    sq += static_cast<double>(o[int64_t{'a'} * 256 + j]) * o[int64_t{'a'} * 256 + j];
  EXPECT_NEAR(std::sqrt(sq), 3.0, 0.6);
  // A "quiet" row (the unprintable byte 0x01) is 20 times smaller.
  sq = 0;
  for (int j = 0; j < 256; ++j) sq += static_cast<double>(o[256 + j]) * o[256 + j];
  EXPECT_NEAR(std::sqrt(sq), 0.15, 0.05);
}

TEST(SynthTokenizer, BuiltInVocabularyHasExactlyTheSizeAskedFor) {
  for (uint32_t n : {300u, 1024u, 32000u}) {
    const SynthTokenizer t = builtin_synth_tokenizer(n);
    EXPECT_EQ(t.n_tokens, n);
    const auto& tokens = t.metadata.get_string_array("tokenizer.ggml.tokens");
    ASSERT_EQ(tokens.size(), n);
    EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), n) << "duplicate tokens";
    EXPECT_EQ(tokens[n - 5], "<|begin_of_text|>");
    EXPECT_EQ(t.metadata.get_i32_array("tokenizer.ggml.token_type")[n - 1], 3);  // control
    const std::set<std::string> known(tokens.begin(), tokens.end());
    for (const std::string& m : t.metadata.get_string_array("tokenizer.ggml.merges")) {
      const size_t sp = m.find(' ');
      ASSERT_NE(sp, std::string::npos);
      EXPECT_TRUE(known.count(m.substr(0, sp)) && known.count(m.substr(sp + 1)) &&
                  known.count(m.substr(0, sp) + m.substr(sp + 1)))
          << m;
    }
    const Tokenizer tok = Tokenizer::from_metadata(t.metadata);
    const std::string text = "The model liked numbers like 2048.\nSo did we: \xC3\xA9t\xC3\xA9!";
    const std::vector<int32_t> ids = tok.encode(text, true, false);
    EXPECT_EQ(ids.front(), static_cast<int32_t>(n - 5));
    EXPECT_EQ(tok.decode(ids), text);
  }
  EXPECT_THROW(builtin_synth_tokenizer(100), UsageError);
}

TEST(SynthTokenizer, VocabFileIsCopiedAndPadded) {
  const SynthTokenizer t = vocab_file_tokenizer(vocab_file("llama-spm"), 32100);
  EXPECT_EQ(t.n_real_tokens, 32000u);
  EXPECT_EQ(t.n_tokens, 32100u);
  const auto& tokens = t.metadata.get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 32100u);
  EXPECT_EQ(tokens.back(), "[PAD32099]");
  EXPECT_EQ(t.metadata.get_i32_array("tokenizer.ggml.token_type").back(), 5);  // unused
  EXPECT_EQ(t.metadata.get_f32_array("tokenizer.ggml.scores").size(), 32100u);
  EXPECT_TRUE(t.quiet[32050]);
  EXPECT_FALSE(t.quiet[1000]);
  // It tokenizes exactly as the original.
  const GgufFile orig = GgufFile::open(vocab_file("llama-spm"));
  const Tokenizer a = Tokenizer::from_gguf(orig), b = Tokenizer::from_metadata(t.metadata);
  const std::string text = "Hello world, this is a test of the padded vocabulary 123.";
  EXPECT_EQ(a.encode(text), b.encode(text));

  // A larger vocabulary than the preset's is kept whole.
  const SynthTokenizer g = vocab_file_tokenizer(vocab_file("gpt-2"), 1024);
  EXPECT_EQ(g.n_tokens, 50257u);
  EXPECT_EQ(g.n_real_tokens, 50257u);

  EXPECT_THROW(vocab_file_tokenizer(vocab_file("no-such-file"), 1024), Error);
}

TEST(SynthModel, AModelWithAVocabFileLoadsAndTokenizesLikeIt) {
  const std::string path =
      synth("tiny-spm.gguf", LlamaFtype::MOSTLY_Q8_0, 5, 2, vocab_file("llama-spm"));
  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.tensor_info("token_embd.weight").dims[1], 32000u);
  const Tokenizer tok = Tokenizer::from_gguf(f);
  const Tokenizer orig = Tokenizer::from_gguf(GgufFile::open(vocab_file("llama-spm")));
  EXPECT_EQ(tok.encode("Once upon a time"), orig.encode("Once upon a time"));
}

TEST(TensorStreamer, ChunkSizeDoesNotChangeTheFile) {
  GgufWriter plan;
  plan.set_string("general.architecture", "test");
  plan.add_tensor("a", GgmlType::Q4_K, {512, 37});
  plan.add_tensor("b", GgmlType::F16, {96, 5});
  plan.add_tensor("c", GgmlType::Q8_0, {64, 300});
  auto write = [&](const std::string& name, uint64_t chunk) {
    const std::string path = model_test::temp_path(name);
    GgufFileWriter out(plan, path);
    cpu::ThreadPool pool(2);
    TensorStreamer s(out, pool, chunk);
    for (const GgufTensorInfo& t : plan.tensors()) {
      s.write_rows(t, [&](int64_t row, float* v) {
        for (uint64_t j = 0; j < t.dims[0]; ++j)
          v[j] = std::sin(static_cast<float>(row * 131 + static_cast<int64_t>(j)) * 0.01f);
      });
    }
    s.flush();
    out.finish();
    return read_bytes(path);
  };
  const std::vector<uint8_t> small = write("chunks-small.gguf", 700),
                             big = write("chunks-big.gguf", 1 << 24);
  ASSERT_EQ(small.size(), plan.file_size());
  EXPECT_TRUE(small == big);
  // And the bytes are the reference quantizer's.
  const GgufFile f = GgufFile::from_owned_bytes(small);
  const GgufTensorInfo& c = f.tensor_info("c");
  std::vector<float> row(64);
  std::vector<uint8_t> q(ggml_row_bytes(GgmlType::Q8_0, 64));
  for (int j = 0; j < 64; ++j)
    row[static_cast<size_t>(j)] = std::sin(static_cast<float>(299 * 131 + j) * 0.01f);
  quantize_row(GgmlType::Q8_0, row.data(), q.data(), 64);
  EXPECT_TRUE(std::equal(q.begin(), q.end(), f.tensor_data(c).data() + 299 * q.size()));
}

}  // namespace
}  // namespace nvhcq::llm
