#pragma once
// The tensors of a LLaMA-family model, found by llama.cpp's names in a GGUF file
// and checked against the hyperparameters. Matrices stay where they are in the
// file's memory mapping: a WeightMatrix is a view (type, shape, pointer), and the
// CPU computes on the file's bytes directly. Only the small 1-D tensors (norm
// weights, biases, RoPE frequency factors) are copied out as f32.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.h"
#include "llm/model/model_config.h"
#include "llm/quant/quant_registry.h"

namespace nvhcq::llm {

// A 2-D weight in the file: `rows` rows (output features) of `cols` elements
// (input features), each row `row_bytes` long. ggml order: dims = [cols, rows].
struct WeightMatrix {
  const GgufTensorInfo* info = nullptr;
  const QuantOps* ops = nullptr;
  int64_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;
  uint64_t row_bytes = 0;

  const uint8_t* row(int64_t r) const { return data + static_cast<uint64_t>(r) * row_bytes; }
  GgmlType type() const { return ops->type; }
};

struct LayerWeights {
  std::vector<float> attn_norm;  // n_embd
  WeightMatrix wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;  // qwen2 only (empty otherwise)
  std::vector<float> ffn_norm;    // n_embd
  WeightMatrix w_gate, w_up, w_down;
};

struct ModelWeights {
  WeightMatrix token_embd;  // rows: vocabulary, cols: n_embd
  std::vector<float> output_norm;
  WeightMatrix output;  // token_embd again when the output is tied
  bool tied_output = false;
  std::vector<LayerWeights> layers;
  // Llama-3 RoPE: per frequency, the divisor of its angle (rope_freqs.weight).
  std::vector<float> rope_freq_factors;

  // Finds and checks every tensor; sets config.n_vocab. FormatError names the
  // tensor for a missing one, a wrong shape or a type nvhcq cannot compute with.
  static ModelWeights from_gguf(const GgufFile& file, ModelConfig& config);
};

}  // namespace nvhcq::llm
