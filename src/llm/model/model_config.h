#pragma once
// The hyperparameters of a LLaMA-family model, read from GGUF metadata
// ("<arch>.block_count", "<arch>.attention.head_count", ...), as llama.cpp
// reads them. The architectures nvhcq runs differ only in metadata and biases:
//   llama   — RMSNorm, RoPE on adjacent pairs ("normal"), GQA, SwiGLU
//   mistral — the same graph under its own key prefix
//   qwen2   — biases on Q, K and V, RoPE on split halves ("neox")

#include <cstdint>
#include <string>

#include "llm/gguf/gguf_metadata.h"

namespace nvhcq::llm {

enum class ModelArch { kLlama, kMistral, kQwen2 };

// How RoPE pairs the dimensions of a head (llama.cpp's rope types).
enum class RopeStyle {
  kNormal,  // (x[2i], x[2i+1]): llama, mistral
  kNeox,    // (x[i], x[i + n_rot/2]): qwen2
};

// RoPE frequency scaling stated in metadata (rope.scaling.*). Llama-3's scaling
// comes as the rope_freqs tensor instead (see ModelWeights), or as
// rope.scaling.type "llama3" with the factors below when a file carries them.
struct RopeScaling {
  enum class Kind { kNone, kLinear, kLlama3 };
  Kind kind = Kind::kNone;
  float factor = 1.0f;
  float low_freq_factor = 1.0f;      // llama3 only
  float high_freq_factor = 4.0f;     // llama3 only
  uint32_t original_context = 8192;  // llama3 only
};

struct ModelConfig {
  ModelArch arch = ModelArch::kLlama;
  std::string arch_name;  // general.architecture
  std::string name;       // general.name, when present
  uint32_t n_layer = 0;
  uint32_t n_embd = 0;
  uint32_t n_ff = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;  // attention.key_length, else n_embd / n_head
  uint32_t n_rot = 0;     // rope.dimension_count, else head_dim
  uint32_t n_ctx_train = 0;
  uint32_t n_vocab = 0;  // from the token_embd tensor (set by ModelWeights)
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  RopeStyle rope_style = RopeStyle::kNormal;
  RopeScaling rope_scaling;
  bool attention_bias = false;  // qwen2: Q, K, V carry biases

  uint32_t n_gqa() const { return n_head / n_head_kv; }
  uint32_t q_dim() const { return n_head * head_dim; }
  uint32_t kv_dim() const { return n_head_kv * head_dim; }

  // Reads and checks the hyperparameters; FormatError naming the key for a missing
  // or inconsistent value, or for an architecture nvhcq does not run.
  static ModelConfig from_metadata(const GgufMetadata& metadata);
  // "llama: 16 layers, 2048 wide, 32 heads (8 KV), FFN 8192, ..."
  std::string describe() const;
};

std::string_view model_arch_name(ModelArch arch);

}  // namespace nvhcq::llm
