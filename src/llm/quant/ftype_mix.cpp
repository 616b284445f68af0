#include "llm/quant/ftype_mix.h"

#include <cctype>
#include <string>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

struct FtypeInfo {
  LlamaFtype ftype;
  std::string_view name;
  GgmlType default_type;
};

constexpr FtypeInfo kFtypes[] = {
    {LlamaFtype::ALL_F32, "F32", GgmlType::F32},
    {LlamaFtype::MOSTLY_F16, "F16", GgmlType::F16},
    {LlamaFtype::MOSTLY_BF16, "BF16", GgmlType::BF16},
    {LlamaFtype::MOSTLY_Q4_0, "Q4_0", GgmlType::Q4_0},
    {LlamaFtype::MOSTLY_Q4_1, "Q4_1", GgmlType::Q4_1},
    {LlamaFtype::MOSTLY_Q5_0, "Q5_0", GgmlType::Q5_0},
    {LlamaFtype::MOSTLY_Q5_1, "Q5_1", GgmlType::Q5_1},
    {LlamaFtype::MOSTLY_Q8_0, "Q8_0", GgmlType::Q8_0},
    {LlamaFtype::MOSTLY_Q2_K, "Q2_K", GgmlType::Q2_K},
    {LlamaFtype::MOSTLY_Q3_K_S, "Q3_K_S", GgmlType::Q3_K},
    {LlamaFtype::MOSTLY_Q3_K_M, "Q3_K_M", GgmlType::Q3_K},
    {LlamaFtype::MOSTLY_Q3_K_L, "Q3_K_L", GgmlType::Q3_K},
    {LlamaFtype::MOSTLY_Q4_K_S, "Q4_K_S", GgmlType::Q4_K},
    {LlamaFtype::MOSTLY_Q4_K_M, "Q4_K_M", GgmlType::Q4_K},
    {LlamaFtype::MOSTLY_Q5_K_S, "Q5_K_S", GgmlType::Q5_K},
    {LlamaFtype::MOSTLY_Q5_K_M, "Q5_K_M", GgmlType::Q5_K},
    {LlamaFtype::MOSTLY_Q6_K, "Q6_K", GgmlType::Q6_K},
};

const FtypeInfo& info(LlamaFtype ftype) {
  for (const auto& f : kFtypes) {
    if (f.ftype == ftype) return f;
  }
  throw FormatError("unknown llama file type " + std::to_string(static_cast<uint32_t>(ftype)));
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// llama.cpp's tensor categories (found by name; the order of the tests matters).
enum class Category {
  kTokenEmbd,
  kAttnQ,
  kAttnV,
  kAttnK,
  kAttnQkv,
  kAttnKvB,
  kAttnOutput,
  kFfnUp,
  kFfnGate,
  kFfnDown,
  kOutput,
  kOther
};

Category category_of(std::string_view name) {
  if (name == "output.weight") return Category::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight")
    return Category::kTokenEmbd;
  if (contains(name, "attn_qkv.weight")) return Category::kAttnQkv;
  if (contains(name, "attn_kv_b.weight")) return Category::kAttnKvB;
  if (contains(name, "attn_v.weight")) return Category::kAttnV;
  if (contains(name, "attn_k.weight")) return Category::kAttnK;
  if (contains(name, "attn_q.weight")) return Category::kAttnQ;
  if (contains(name, "attn_output.weight")) return Category::kAttnOutput;
  if (contains(name, "ffn_up")) return Category::kFfnUp;
  if (contains(name, "ffn_gate")) return Category::kFfnGate;
  if (contains(name, "ffn_down")) return Category::kFfnDown;
  return Category::kOther;
}

// Fused QKV and MLA's kv_b share attn_v's sensitivity (and its rules).
bool is_attn_v_like(Category c) {
  return c == Category::kAttnV || c == Category::kAttnQkv || c == Category::kAttnKvB;
}

// The N of a "blk.N." name. llama.cpp counts attn_v and ffn_* tensors in layer
// order, so for a model with one of each per layer its counters equal N.
int layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return 0;
  int layer = 0;
  size_t i = 4;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    layer = layer * 10 + (name[i] - '0');
    if (layer > 1000000) break;
  }
  return layer;
}

// Layers that get more bits in the _M mixes: the first and last eighth, and every
// third layer in between.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

uint32_t block_of(GgmlType t) {
  return traits(t).block_elements;
}

bool is_quantized(GgmlType t) {
  return traits(t).quantized;
}

GgmlType mix_rules(LlamaFtype ftype, GgmlType new_type, std::string_view name, int64_t ncols,
                   Category cat, const QuantMixModel& m, const QuantMixOptions& o) {
  using F = LlamaFtype;
  const int i_layer = layer_of(name);
  const int n_layer = m.n_layer;
  if (cat == Category::kOutput || (!m.has_output && cat == Category::kTokenEmbd)) {
    if (o.output_type) return *o.output_type;
    if (m.falcon || ncols % block_of(new_type) != 0) return GgmlType::Q8_0;
    return new_type != GgmlType::Q8_0 ? GgmlType::Q6_K : new_type;
  }
  if (cat == Category::kTokenEmbd) {
    return o.token_embd_type ? *o.token_embd_type : new_type;  // our file types change nothing
  }
  if (is_attn_v_like(cat)) {
    const int i_wv = i_layer;
    const int n_wv = m.n_attention_wv >= 0 ? m.n_attention_wv : n_layer;
    if (ftype == F::MOSTLY_Q2_K) {
      new_type = m.n_gqa >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
    } else if (ftype == F::MOSTLY_Q3_K_M) {
      new_type = i_wv < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
    } else if (ftype == F::MOSTLY_Q3_K_L) {
      new_type = GgmlType::Q5_K;
    } else if ((ftype == F::MOSTLY_Q4_K_M || ftype == F::MOSTLY_Q5_K_M) &&
               use_more_bits(i_wv, n_wv)) {
      new_type = GgmlType::Q6_K;
    } else if (ftype == F::MOSTLY_Q4_K_S && i_wv < 4) {
      new_type = GgmlType::Q5_K;
    }
    // 70B shares each attn_v among 8 heads: it is small, give it more bits.
    if (m.llama_70b && (new_type == GgmlType::Q3_K || new_type == GgmlType::Q4_K)) {
      new_type = GgmlType::Q5_K;
    }
    if (m.n_expert == 8) new_type = GgmlType::Q8_0;
    return new_type;
  }
  if (cat == Category::kAttnK) {
    return m.n_expert == 8 ? GgmlType::Q8_0 : new_type;
  }
  if (cat == Category::kFfnDown) {
    if (ftype == F::MOSTLY_Q2_K) {
      new_type = GgmlType::Q3_K;
    } else if (ftype == F::MOSTLY_Q3_K_M) {
      new_type = i_layer < n_layer / 16                         ? GgmlType::Q5_K
                 : !m.falcon || use_more_bits(i_layer, n_layer) ? GgmlType::Q4_K
                                                                : GgmlType::Q3_K;
    } else if (ftype == F::MOSTLY_Q3_K_L) {
      new_type = m.falcon ? GgmlType::Q4_K : GgmlType::Q5_K;
    } else if (ftype == F::MOSTLY_Q4_K_M) {
      if (m.falcon) {
        new_type = i_layer < n_layer / 16            ? GgmlType::Q6_K
                   : use_more_bits(i_layer, n_layer) ? GgmlType::Q5_K
                                                     : GgmlType::Q4_K;
      } else if (use_more_bits(i_layer, n_layer)) {
        new_type = GgmlType::Q6_K;
      }
    } else if (ftype == F::MOSTLY_Q5_K_M && use_more_bits(i_layer, n_layer)) {
      new_type = GgmlType::Q6_K;
    } else if (ftype == F::MOSTLY_Q4_K_S && !m.falcon && i_layer < n_layer / 8) {
      new_type = GgmlType::Q5_K;
    }
    return new_type;
  }
  if (cat == Category::kAttnOutput) {
    if (!m.falcon) {
      if (m.n_expert == 8) {
        if (ftype == F::MOSTLY_Q2_K || ftype == F::MOSTLY_Q3_K_S || ftype == F::MOSTLY_Q3_K_M ||
            ftype == F::MOSTLY_Q4_K_S || ftype == F::MOSTLY_Q4_K_M) {
          new_type = GgmlType::Q5_K;
        }
      } else if (ftype == F::MOSTLY_Q2_K) {
        new_type = GgmlType::Q3_K;
      } else if (ftype == F::MOSTLY_Q3_K_M) {
        new_type = GgmlType::Q4_K;
      } else if (ftype == F::MOSTLY_Q3_K_L) {
        new_type = GgmlType::Q5_K;
      }
    } else if (ftype == F::MOSTLY_Q3_K_L) {
      new_type = GgmlType::Q4_K;
    }
    return new_type;
  }
  return new_type;  // attn_q, ffn_up, ffn_gate and others: only IQ mixes change them
}

// llama.cpp's fallback when a row is not a whole number of the chosen type's blocks.
GgmlType fallback(std::string_view name, int64_t ncols, GgmlType type) {
  if (ncols % block_of(type) == 0) return type;
  GgmlType to;
  switch (type) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
      to = GgmlType::Q4_0;
      break;
    case GgmlType::Q4_K:
      to = GgmlType::Q5_0;
      break;
    case GgmlType::Q5_K:
      to = GgmlType::Q5_1;
      break;
    case GgmlType::Q6_K:
      to = GgmlType::Q8_0;
      break;
    default:
      throw FormatError("tensor " + std::string(name) + ": rows of " + std::to_string(ncols) +
                        " elements do not fit " + std::string(traits(type).name) +
                        " blocks, and llama.cpp defines no fallback for it");
  }
  return ncols % block_of(to) == 0 ? to : GgmlType::F16;
}

int n_dims(std::span<const int64_t> shape) {
  int dims = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > 1) dims = static_cast<int>(i) + 1;
  }
  return dims;
}

}  // namespace

std::optional<LlamaFtype> llama_ftype_from_name(std::string_view name) {
  for (const auto& f : kFtypes) {
    if (f.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::toupper(static_cast<unsigned char>(name[i])) == f.name[i];
    }
    if (same) return f.ftype;
  }
  return std::nullopt;
}

std::string_view llama_ftype_name(LlamaFtype ftype) {
  return info(ftype).name;
}

std::optional<LlamaFtype> llama_ftype_from_id(uint32_t id) {
  for (const auto& f : kFtypes) {
    if (static_cast<uint32_t>(f.ftype) == id) return f.ftype;
  }
  return std::nullopt;
}

GgmlType llama_ftype_default_type(LlamaFtype ftype) {
  return info(ftype).default_type;
}

bool tensor_is_quantizable(std::string_view name, std::span<const int64_t> shape,
                           const QuantMixOptions& options) {
  if (n_dims(shape) < 2) return false;
  if (!name.ends_with("weight")) return false;
  if (!options.quantize_output && name == "output.weight") return false;
  if (name == "position_embd.weight" || name == "token_types.weight") return false;
  // Norms, MoE routers, and small or position-like tensors that llama.cpp keeps as they are.
  static constexpr std::string_view kKept[] = {"_norm.weight",
                                               "ffn_gate_inp.weight",
                                               "ffn_gate_tid2eid.weight",
                                               "altup",
                                               "laurel",
                                               "per_layer_model_proj",
                                               "ssm_conv1d",
                                               "shortconv.conv.weight",
                                               "indexer.k_proj.weight",
                                               "indexer.q_proj.weight",
                                               "time_mix_first.weight",
                                               "time_mix_w0.weight",
                                               "time_mix_w1.weight",
                                               "time_mix_w2.weight",
                                               "time_mix_v0.weight",
                                               "time_mix_v1.weight",
                                               "time_mix_v2.weight",
                                               "time_mix_a0.weight",
                                               "time_mix_a1.weight",
                                               "time_mix_a2.weight",
                                               "time_mix_g1.weight",
                                               "time_mix_g2.weight",
                                               "time_mix_decay_w1.weight",
                                               "time_mix_decay_w2.weight",
                                               "time_mix_lerp_fused.weight",
                                               "attn_rel_b.weight",
                                               ".position_embd",
                                               "sam.pos_embd",
                                               "sam.neck.",
                                               "sam.net_",
                                               ".rel_pos",
                                               ".patch_embd",
                                               ".patch_merger",
                                               "a.rvq.codebook",
                                               "mm.a.code_embd"};
  for (std::string_view part : kKept) {
    if (contains(name, part)) return false;
  }
  return true;
}

GgmlType llama_tensor_type(LlamaFtype ftype, std::string_view name, std::span<const int64_t> shape,
                           const QuantMixModel& model, GgmlType current,
                           const QuantMixOptions& options) {
  const GgmlType default_type = llama_ftype_default_type(ftype);
  if (shape.empty()) throw FormatError("tensor " + std::string(name) + " has no shape");
  if (!tensor_is_quantizable(name, shape, options)) return current;
  const Category cat = category_of(name);
  if (options.token_embd_type && cat == Category::kTokenEmbd) return *options.token_embd_type;
  if (options.output_type && cat == Category::kOutput) return *options.output_type;
  if (!is_quantized(default_type)) return default_type;  // F32/F16/BF16: no mixing, no fallback
  if (model.n_layer <= 0) {
    throw FormatError("quantization mix for " + std::string(name) +
                      ": the model's layer count is unknown");
  }
  const int64_t ncols = shape[0];
  GgmlType type = default_type;
  if (!options.pure) type = mix_rules(ftype, type, name, ncols, cat, model, options);
  return fallback(name, ncols, type);
}

}  // namespace nvhcq::llm
