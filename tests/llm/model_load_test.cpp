// Loading models: what a broken or unsupported file must be told apart by — a
// FormatError naming the key or tensor at fault, never a crash.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "base/error.h"
#include "llm/gguf/gguf_writer.h"
#include "llm/model/llama_model.h"

namespace nvhcq::llm {
namespace {

// A minimal llama model (1 layer, 32 wide, 2 heads on 1 KV head, FFN 64, 16 tokens)
// in memory, with hooks to break it.
struct MiniModel {
  GgufWriter w;
  std::vector<std::vector<uint8_t>> data;

  void tensor(const std::string& name, std::vector<uint64_t> dims, GgmlType type = GgmlType::F32) {
    const GgufTensorInfo& info = w.add_tensor(name, type, std::move(dims));
    std::vector<uint8_t> bytes(info.n_bytes);
    // Small nonzero values (f32 0.01 as bytes would be odd for other types; keep them f32).
    if (type == GgmlType::F32) {
      for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        const float v = 0.01f * static_cast<float>((i / 4) % 7) - 0.02f;
        std::memcpy(&bytes[i], &v, 4);
      }
    }
    data.push_back(std::move(bytes));
  }

  static MiniModel make(const std::function<bool(const std::string&)>& keep_tensor = {},
                        const std::function<void(GgufWriter&)>& edit_metadata = {}) {
    MiniModel m;
    m.w.set_string("general.architecture", "llama");
    m.w.set_scalar("llama.block_count", uint32_t{1});
    m.w.set_scalar("llama.embedding_length", uint32_t{32});
    m.w.set_scalar("llama.feed_forward_length", uint32_t{64});
    m.w.set_scalar("llama.attention.head_count", uint32_t{2});
    m.w.set_scalar("llama.attention.head_count_kv", uint32_t{1});
    m.w.set_scalar("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    m.w.set_scalar("llama.context_length", uint32_t{64});
    if (edit_metadata) edit_metadata(m.w);
    auto add = [&](const std::string& name, std::vector<uint64_t> dims) {
      if (!keep_tensor || keep_tensor(name)) m.tensor(name, std::move(dims));
    };
    add("token_embd.weight", {32, 16});
    add("blk.0.attn_norm.weight", {32});
    add("blk.0.attn_q.weight", {32, 32});
    add("blk.0.attn_k.weight", {32, 16});
    add("blk.0.attn_v.weight", {32, 16});
    add("blk.0.attn_output.weight", {32, 32});
    add("blk.0.ffn_norm.weight", {32});
    add("blk.0.ffn_gate.weight", {32, 64});
    add("blk.0.ffn_up.weight", {32, 64});
    add("blk.0.ffn_down.weight", {64, 32});
    add("output_norm.weight", {32});
    return m;
  }

  GgufFile file() const {
    std::vector<std::span<const uint8_t>> spans(data.begin(), data.end());
    return GgufFile::from_owned_bytes(w.to_bytes(spans), "mini.gguf");
  }
};

// The FormatError message of loading `m`, or "" when it loads.
std::string load_error(const MiniModel& m) {
  try {
    LlamaModel model(m.file());
    return "";
  } catch (const FormatError& e) {
    return e.what();
  }
}

TEST(ModelLoad, AMinimalModelLoadsTiedAndRuns) {
  const MiniModel m = MiniModel::make();
  LlamaModel model(m.file());
  EXPECT_TRUE(model.weights().tied_output);
  EXPECT_EQ(model.config().n_vocab, 16u);
  EXPECT_EQ(model.config().n_ctx_train, 64u);
  KvCache cache = model.make_cache(8);
  cpu::ThreadPool pool(1);
  std::vector<float> logits;
  const std::vector<int32_t> ids = {1, 2, 3};
  model.forward(ids, cache, pool, logits);
  ASSERT_EQ(logits.size(), 16u);
  for (float l : logits) EXPECT_TRUE(std::isfinite(l));
}

TEST(ModelLoad, UnsupportedArchitectureIsNamed) {
  const MiniModel m =
      MiniModel::make({}, [](GgufWriter& w) { w.set_string("general.architecture", "gptj"); });
  EXPECT_NE(load_error(m).find("'gptj' is not supported"), std::string::npos) << load_error(m);
}

TEST(ModelLoad, MissingTensorIsNamed) {
  const MiniModel m =
      MiniModel::make([](const std::string& n) { return n != "blk.0.ffn_up.weight"; });
  EXPECT_NE(load_error(m).find("blk.0.ffn_up.weight"), std::string::npos) << load_error(m);
}

TEST(ModelLoad, MissingOrBadHyperparameterIsNamed) {
  MiniModel m = MiniModel::make({}, [](GgufWriter& w) { w.erase("llama.block_count"); });
  EXPECT_NE(load_error(m).find("llama.block_count"), std::string::npos) << load_error(m);
  m = MiniModel::make(
      {}, [](GgufWriter& w) { w.set_scalar("llama.attention.head_count_kv", uint32_t{3}); });
  EXPECT_NE(load_error(m).find("head_count_kv"), std::string::npos) << load_error(m);
  m = MiniModel::make({}, [](GgufWriter& w) { w.set_scalar("llama.block_count", uint32_t{0}); });
  EXPECT_NE(load_error(m).find("llama.block_count"), std::string::npos) << load_error(m);
  m = MiniModel::make({}, [](GgufWriter& w) { w.set_string("llama.block_count", "one"); });
  EXPECT_NE(load_error(m).find("llama.block_count"), std::string::npos) << load_error(m);
  m = MiniModel::make(
      {}, [](GgufWriter& w) { w.set_string("llama.rope.scaling.type", "ntk-by-parts"); });
  EXPECT_NE(load_error(m).find("ntk-by-parts"), std::string::npos) << load_error(m);
  // YaRN runs unscaled (with a warning), exact within the original context.
  m = MiniModel::make({}, [](GgufWriter& w) { w.set_string("llama.rope.scaling.type", "yarn"); });
  EXPECT_EQ(load_error(m), "");
}

TEST(ModelLoad, WrongShapeOrUnusableTypeIsNamed) {
  // Re-add attn_k with the shape of attn_q (as if head_count_kv were ignored).
  MiniModel bad = MiniModel::make([](const std::string& n) { return n != "blk.0.attn_k.weight"; });
  bad.tensor("blk.0.attn_k.weight", {32, 32});
  std::string e = load_error(bad);
  EXPECT_NE(e.find("blk.0.attn_k.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("[32, 16]"), std::string::npos) << e;

  MiniModel iq = MiniModel::make([](const std::string& n) { return n != "blk.0.attn_q.weight"; });
  iq.tensor("blk.0.attn_q.weight", {32, 32}, GgmlType::IQ4_NL);
  e = load_error(iq);
  EXPECT_NE(e.find("blk.0.attn_q.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot compute"), std::string::npos) << e;
}

TEST(ModelLoad, ReadsRopeSettings) {
  MiniModel m = MiniModel::make({}, [](GgufWriter& w) {
    w.set_string("llama.rope.scaling.type", "linear");
    w.set_scalar("llama.rope.scaling.factor", 4.0f);
    w.set_scalar("llama.rope.freq_base", 500000.0f);
    w.set_scalar("llama.rope.dimension_count", uint32_t{8});
  });
  LlamaModel model(m.file());
  EXPECT_EQ(model.config().rope_scaling.kind, RopeScaling::Kind::kLinear);
  EXPECT_EQ(model.config().rope_scaling.factor, 4.0f);
  EXPECT_EQ(model.config().rope_freq_base, 500000.0f);
  EXPECT_EQ(model.config().n_rot, 8u);
  EXPECT_EQ(model.config().head_dim, 16u);
  m = MiniModel::make({}, [](GgufWriter& w) {
    w.set_string("llama.rope.scaling.type", "llama3");
    w.set_scalar("llama.rope.scaling.factor", 8.0f);
    w.set_scalar("llama.rope.scaling.original_context_length", uint32_t{8192});
  });
  LlamaModel l3(m.file());
  EXPECT_EQ(l3.config().rope_scaling.kind, RopeScaling::Kind::kLlama3);
  EXPECT_EQ(l3.config().rope_scaling.original_context, 8192u);
  m = MiniModel::make(
      {}, [](GgufWriter& w) { w.set_scalar("llama.rope.dimension_count", uint32_t{15}); });
  EXPECT_NE(load_error(m).find("rope.dimension_count"), std::string::npos) << load_error(m);
}

TEST(ModelLoad, ATokenizerOnlyFileIsNotAModel) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "gpt2");
  EXPECT_THROW(LlamaModel{GgufFile::from_owned_bytes(w.to_bytes({}), "vocab.gguf")}, FormatError);
}

}  // namespace
}  // namespace nvhcq::llm
