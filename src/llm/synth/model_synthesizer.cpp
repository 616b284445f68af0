#include "llm/synth/model_synthesizer.h"

#include <cmath>
#include <vector>

#include "base/error.h"
#include "llm/gguf/gguf_file_writer.h"
#include "llm/gguf/gguf_writer.h"
#include "llm/model/rope.h"
#include "llm/synth/synth_tokenizer.h"
#include "llm/synth/tensor_streamer.h"
#include "llm/synth/weight_rng.h"

namespace nvhcq::llm {
namespace {

enum class Kind { kEmbedding, kOutput, kLinear, kNorm, kBias, kRopeFreqs };

struct PlannedTensor {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the row length
  Kind kind;
};

constexpr float kLogitStd = 3.0f;     // wanted standard deviation of the logits
constexpr float kQuietScale = 0.05f;  // rows of tokens a random model should rarely pick

std::vector<PlannedTensor> plan_tensors(const SynthPreset& p, uint32_t n_vocab, bool biases,
                                        bool rope_freqs) {
  const uint64_t d = p.n_embd, hd = p.n_embd / p.n_head;
  const uint64_t qd = p.n_head * hd, kvd = p.n_head_kv * hd;
  std::vector<PlannedTensor> t;
  t.push_back({"token_embd.weight", {d, n_vocab}, Kind::kEmbedding});
  if (rope_freqs) t.push_back({"rope_freqs.weight", {hd / 2}, Kind::kRopeFreqs});
  for (uint32_t i = 0; i < p.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    t.push_back({b + "attn_norm.weight", {d}, Kind::kNorm});
    t.push_back({b + "attn_q.weight", {d, qd}, Kind::kLinear});
    t.push_back({b + "attn_k.weight", {d, kvd}, Kind::kLinear});
    t.push_back({b + "attn_v.weight", {d, kvd}, Kind::kLinear});
    if (biases) {
      t.push_back({b + "attn_q.bias", {qd}, Kind::kBias});
      t.push_back({b + "attn_k.bias", {kvd}, Kind::kBias});
      t.push_back({b + "attn_v.bias", {kvd}, Kind::kBias});
    }
    t.push_back({b + "attn_output.weight", {qd, d}, Kind::kLinear});
    t.push_back({b + "ffn_norm.weight", {d}, Kind::kNorm});
    t.push_back({b + "ffn_gate.weight", {d, p.n_ff}, Kind::kLinear});
    t.push_back({b + "ffn_up.weight", {d, p.n_ff}, Kind::kLinear});
    t.push_back({b + "ffn_down.weight", {p.n_ff, d}, Kind::kLinear});
  }
  t.push_back({"output_norm.weight", {d}, Kind::kNorm});
  if (!p.tied_output) t.push_back({"output.weight", {d, n_vocab}, Kind::kOutput});
  return t;
}

void set_model_metadata(GgufWriter& w, const SynthOptions& o, uint32_t n_vocab) {
  const SynthPreset& p = o.preset;
  const std::string& a = o.arch;
  w.set_string("general.architecture", a);
  w.set_string("general.name", "nvhcq-synth-" + std::string(p.name));
  w.set_scalar("general.file_type", static_cast<uint32_t>(o.ftype));
  w.set_scalar("general.quantization_version", static_cast<uint32_t>(2));
  w.set_scalar(a + ".vocab_size", n_vocab);
  w.set_scalar(a + ".context_length", p.n_ctx);
  w.set_scalar(a + ".embedding_length", p.n_embd);
  w.set_scalar(a + ".block_count", p.n_layer);
  w.set_scalar(a + ".feed_forward_length", p.n_ff);
  w.set_scalar(a + ".attention.head_count", p.n_head);
  w.set_scalar(a + ".attention.head_count_kv", p.n_head_kv);
  w.set_scalar(a + ".rope.freq_base", p.rope_freq_base);
  w.set_scalar(a + ".rope.dimension_count", p.n_embd / p.n_head);
  w.set_scalar(a + ".attention.layer_norm_rms_epsilon", p.rms_eps);
  w.set_string("nvhcq.synth.preset", std::string(p.name));
  w.set_scalar("nvhcq.synth.seed", o.seed);
}

void check_options(const SynthOptions& o) {
  if (o.arch != "llama" && o.arch != "mistral" && o.arch != "qwen2") {
    throw UsageError("--arch '" + o.arch +
                     "' is not one nvhcq synthesizes (llama, mistral, qwen2)");
  }
  if (o.output_path.empty()) throw UsageError("no output file (-o)");
  const SynthPreset& p = o.preset;
  if (p.n_head == 0 || p.n_embd % p.n_head != 0 || p.n_head % p.n_head_kv != 0) {
    throw UsageError("preset '" + std::string(p.name) + "' has inconsistent head counts");
  }
}

}  // namespace

SynthResult synthesize_model(const SynthOptions& o, cpu::ThreadPool& pool) {
  check_options(o);
  const SynthPreset& p = o.preset;
  const SynthTokenizer tok = o.vocab_path.empty() ? builtin_synth_tokenizer(p.n_vocab)
                                                  : vocab_file_tokenizer(o.vocab_path, p.n_vocab);
  const uint32_t n_vocab = tok.n_tokens;
  const bool llama3_rope = p.llama3_factor > 0.0f && o.arch != "qwen2";
  const std::vector<PlannedTensor> plan = plan_tensors(p, n_vocab, o.arch == "qwen2", llama3_rope);

  GgufWriter w;
  set_model_metadata(w, o, n_vocab);
  for (const auto& [key, value] : tok.metadata.entries()) w.set(key, value);

  QuantMixModel mix;
  mix.n_layer = static_cast<int>(p.n_layer);
  mix.n_gqa = static_cast<int>(p.n_head / p.n_head_kv);
  mix.has_output = !p.tied_output;
  SynthResult result;
  for (const PlannedTensor& t : plan) {
    const std::vector<int64_t> shape(t.dims.begin(), t.dims.end());
    const GgmlType type = llama_tensor_type(o.ftype, t.name, shape, mix, GgmlType::F32);
    w.add_tensor(t.name, type, t.dims);
    uint64_t n = 1;
    for (uint64_t x : t.dims) n *= x;
    result.parameters += n;
  }

  std::vector<float> rope_factors;
  if (llama3_rope) {
    RopeScaling s;
    s.kind = RopeScaling::Kind::kLlama3;
    s.factor = p.llama3_factor;
    s.low_freq_factor = p.llama3_low_freq_factor;
    s.high_freq_factor = p.llama3_high_freq_factor;
    s.original_context = p.llama3_original_context;
    rope_factors =
        llama3_rope_freq_factors(s, p.rope_freq_base, static_cast<int>(p.n_embd / p.n_head));
  }

  GgufFileWriter out(w, o.output_path);
  TensorStreamer streamer(out, pool);
  const uint64_t total = w.file_size();
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedTensor& t = plan[i];
    const GgufTensorInfo& info = w.tensors()[i];
    if (o.progress) {
      // Where the tensor starts in the file (the writer's own count moves on its
      // writing thread).
      o.progress(t.name,
                 static_cast<double>(w.data_offset() + info.offset) / static_cast<double>(total));
    }
    const int64_t cols = static_cast<int64_t>(t.dims[0]);
    float std = 1.0f / std::sqrt(static_cast<float>(cols));
    if (t.kind == Kind::kEmbedding && !p.tied_output) std = 1.0f;
    if (t.kind == Kind::kOutput || (t.kind == Kind::kEmbedding && p.tied_output)) {
      std = kLogitStd / std::sqrt(static_cast<float>(cols));
    }
    const bool token_rows = t.kind == Kind::kOutput || t.kind == Kind::kEmbedding;
    const std::vector<bool>& quiet = tok.quiet;
    const uint64_t seed = o.seed;
    streamer.write_rows(info, [&](int64_t row, float* v) {
      WeightRng rng(seed, i, static_cast<uint64_t>(row));
      switch (t.kind) {
        case Kind::kNorm:
          for (int64_t j = 0; j < cols; ++j) v[j] = 1.0f + 0.1f * rng.normal();
          return;
        case Kind::kBias:
          for (int64_t j = 0; j < cols; ++j) v[j] = 0.1f * rng.normal();
          return;
        case Kind::kRopeFreqs:
          for (int64_t j = 0; j < cols; ++j) v[j] = rope_factors[static_cast<size_t>(j)];
          return;
        default: {
          const bool hushed = token_rows && quiet[static_cast<size_t>(row)];
          const float s = hushed ? std * kQuietScale : std;
          for (int64_t j = 0; j < cols; ++j) v[j] = s * rng.normal();
        }
      }
    });
  }
  streamer.flush();
  out.finish();
  if (o.progress) o.progress("", 1.0);
  result.file_bytes = total;
  result.n_vocab = n_vocab;
  result.tensors = plan.size();
  return result;
}

}  // namespace nvhcq::llm
