#include "llm/model/model_config.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace nvhcq::llm {
namespace {

// Limits far beyond any real model; they keep a hostile file from asking for
// absurd buffers before a tensor shape check would catch it.
constexpr uint32_t kMaxLayers = 4096;
constexpr uint32_t kMaxWidth = 1u << 20;
constexpr uint32_t kMaxHeads = 1u << 14;

std::string key(const std::string& arch, const char* suffix) {
  return arch + "." + suffix;
}

uint32_t read_count(const GgufMetadata& m, const std::string& k, uint32_t max) {
  const uint32_t v = m.get_u32(k);
  if (v == 0 || v > max) {
    throw FormatError(k + " = " + std::to_string(v) + " is outside 1.." + std::to_string(max));
  }
  return v;
}

// head_count_kv may be one value or one per layer; nvhcq needs one for all.
uint32_t read_head_count_kv(const GgufMetadata& m, const std::string& k, uint32_t n_head) {
  const GgufValue* v = m.find(k);
  if (v == nullptr) return n_head;  // no key: plain multi-head attention
  if (!v->is_array()) return read_count(m, k, kMaxHeads);
  const std::vector<uint32_t> per_layer = v->as_array<uint32_t>(k);
  if (per_layer.empty()) throw FormatError(k + " is an empty array");
  for (uint32_t x : per_layer) {
    if (x != per_layer[0]) {
      throw FormatError(k + " differs between layers, which nvhcq does not support");
    }
  }
  if (per_layer[0] == 0 || per_layer[0] > kMaxHeads) throw FormatError(k + " is out of range");
  return per_layer[0];
}

float read_positive_float(const GgufMetadata& m, const std::string& k, float fallback) {
  const std::optional<float> v = m.find_f32(k);
  if (!v) return fallback;
  if (!(std::isfinite(*v) && *v > 0.0f)) {
    throw FormatError(k + " = " + std::to_string(*v) + " must be a positive number");
  }
  return *v;
}

RopeScaling read_rope_scaling(const GgufMetadata& m, const std::string& arch) {
  RopeScaling s;
  const std::optional<std::string> type = m.find_string(key(arch, "rope.scaling.type"));
  const float factor = read_positive_float(m, key(arch, "rope.scaling.factor"), 1.0f);
  if (!type || *type == "none") {
    // Older files state only a linear factor (rope.scale_linear).
    const float linear = read_positive_float(m, key(arch, "rope.scale_linear"), 1.0f);
    if (linear != 1.0f) {
      s.kind = RopeScaling::Kind::kLinear;
      s.factor = linear;
    }
    return s;
  }
  if (*type == "linear") {
    s.kind = factor != 1.0f ? RopeScaling::Kind::kLinear : RopeScaling::Kind::kNone;
    s.factor = factor;
    return s;
  }
  if (*type == "llama3") {
    s.kind = RopeScaling::Kind::kLlama3;
    s.factor = factor;
    s.low_freq_factor = read_positive_float(m, key(arch, "rope.scaling.low_freq_factor"), 1.0f);
    s.high_freq_factor = read_positive_float(m, key(arch, "rope.scaling.high_freq_factor"), 4.0f);
    s.original_context =
        m.find_u32(key(arch, "rope.scaling.original_context_length")).value_or(8192);
    if (s.high_freq_factor <= s.low_freq_factor || s.original_context == 0) {
      throw FormatError(arch +
                        ".rope.scaling: llama3 scaling needs high_freq_factor > "
                        "low_freq_factor and an original context length");
    }
    return s;
  }
  if (*type == "yarn") {
    // YaRN only changes positions beyond the original context: run without it.
    log::warn(key(arch, "rope.scaling.type"), " 'yarn' is not supported: RoPE runs unscaled, ",
              "which is exact within the model's original context length");
    return s;
  }
  throw FormatError(key(arch, "rope.scaling.type") + " '" + *type +
                    "' is not supported (nvhcq runs none, linear, llama3; yarn unscaled)");
}

}  // namespace

std::string_view model_arch_name(ModelArch arch) {
  switch (arch) {
    case ModelArch::kLlama:
      return "llama";
    case ModelArch::kMistral:
      return "mistral";
    case ModelArch::kQwen2:
      return "qwen2";
  }
  return "?";
}

ModelConfig ModelConfig::from_metadata(const GgufMetadata& m) {
  ModelConfig c;
  c.arch_name = m.get_string("general.architecture");
  if (c.arch_name == "llama") {
    c.arch = ModelArch::kLlama;
  } else if (c.arch_name == "mistral") {
    c.arch = ModelArch::kMistral;
  } else if (c.arch_name == "qwen2") {
    c.arch = ModelArch::kQwen2;
    c.rope_style = RopeStyle::kNeox;
    c.attention_bias = true;
  } else {
    throw FormatError("general.architecture '" + c.arch_name +
                      "' is not supported (nvhcq runs llama, mistral and qwen2)");
  }
  const std::string& a = c.arch_name;
  c.name = m.find_string("general.name").value_or("");
  c.n_layer = read_count(m, key(a, "block_count"), kMaxLayers);
  c.n_embd = read_count(m, key(a, "embedding_length"), kMaxWidth);
  c.n_ff = read_count(m, key(a, "feed_forward_length"), kMaxWidth);
  c.n_head = read_count(m, key(a, "attention.head_count"), kMaxHeads);
  c.n_head_kv = read_head_count_kv(m, key(a, "attention.head_count_kv"), c.n_head);
  if (c.n_head % c.n_head_kv != 0) {
    throw FormatError(key(a, "attention.head_count") + " (" + std::to_string(c.n_head) +
                      ") is not a multiple of head_count_kv (" + std::to_string(c.n_head_kv) + ")");
  }
  if (auto kl = m.find_u32(key(a, "attention.key_length"))) {
    c.head_dim = *kl;
    const uint32_t vl = m.find_u32(key(a, "attention.value_length")).value_or(*kl);
    if (vl != *kl) throw FormatError("key_length != value_length is not supported");
  } else {
    if (c.n_embd % c.n_head != 0) {
      throw FormatError(key(a, "embedding_length") + " is not a multiple of the head count");
    }
    c.head_dim = c.n_embd / c.n_head;
  }
  if (c.head_dim == 0 || c.head_dim % 2 != 0 || c.head_dim > 4096) {
    throw FormatError("head size " + std::to_string(c.head_dim) + " is not supported");
  }
  c.n_rot = m.find_u32(key(a, "rope.dimension_count")).value_or(c.head_dim);
  if (c.n_rot == 0 || c.n_rot % 2 != 0 || c.n_rot > c.head_dim) {
    throw FormatError(key(a, "rope.dimension_count") + " = " + std::to_string(c.n_rot) +
                      " must be even and at most the head size " + std::to_string(c.head_dim));
  }
  c.n_ctx_train = m.find_u32(key(a, "context_length")).value_or(2048);
  if (c.n_ctx_train == 0) c.n_ctx_train = 2048;
  c.rope_freq_base = read_positive_float(m, key(a, "rope.freq_base"), 10000.0f);
  c.rms_eps = read_positive_float(m, key(a, "attention.layer_norm_rms_epsilon"), 1e-5f);
  c.rope_scaling = read_rope_scaling(m, a);
  return c;
}

std::string ModelConfig::describe() const {
  std::ostringstream out;
  out << arch_name << ": " << n_layer << " layers, " << n_embd << " wide, " << n_head << " heads ("
      << n_head_kv << " KV) of " << head_dim << ", FFN " << n_ff << ", vocab " << n_vocab
      << ", rope base " << rope_freq_base;
  if (rope_scaling.kind == RopeScaling::Kind::kLinear) out << " linear x" << rope_scaling.factor;
  if (rope_scaling.kind == RopeScaling::Kind::kLlama3) out << " llama3 x" << rope_scaling.factor;
  out << ", trained context " << n_ctx_train;
  return out.str();
}

}  // namespace nvhcq::llm
