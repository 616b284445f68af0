#include "llm/model/model_weights.h"

#include <cmath>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

std::string blk(uint32_t layer, const char* name) {
  return "blk." + std::to_string(layer) + "." + name;
}

std::string expected(uint64_t a, uint64_t b) {
  return "[" + std::to_string(a) + ", " + std::to_string(b) + "]";
}

WeightMatrix matrix_of(const GgufFile& file, const GgufTensorInfo& info, uint64_t cols,
                       uint64_t rows) {
  if (info.dims.size() != 2 || info.dims[0] != cols || (rows != 0 && info.dims[1] != rows)) {
    throw FormatError(file.name() + ": tensor '" + info.name + "' has shape " +
                      info.shape_string() + ", expected " + expected(cols, rows));
  }
  const QuantOps* ops = find_quant_ops(info.type);
  if (ops == nullptr || ops->vec_dot == nullptr) {
    throw FormatError(file.name() + ": tensor '" + info.name + "' has type " +
                      std::string(traits(info.type).name) +
                      ", which nvhcq cannot compute with on the CPU yet");
  }
  WeightMatrix w;
  w.info = &info;
  w.ops = ops;
  w.cols = static_cast<int64_t>(info.dims[0]);
  w.rows = static_cast<int64_t>(info.dims[1]);
  w.data = file.tensor_data(info).data();
  w.row_bytes = ops->row_bytes(w.cols);
  return w;
}

WeightMatrix matrix(const GgufFile& file, const std::string& name, uint64_t cols, uint64_t rows) {
  return matrix_of(file, file.tensor_info(name), cols, rows);
}

// A 1-D tensor of `n` values, converted to f32.
std::vector<float> vector_of(const GgufFile& file, const std::string& name, uint64_t n) {
  const GgufTensorInfo& info = file.tensor_info(name);
  if (info.n_elements != n || info.dims[0] != n) {
    throw FormatError(file.name() + ": tensor '" + name + "' has shape " + info.shape_string() +
                      ", expected [" + std::to_string(n) + "]");
  }
  const QuantOps* ops = find_quant_ops(info.type);
  if (ops == nullptr || !ops->row_fits(static_cast<int64_t>(n))) {
    throw FormatError(file.name() + ": tensor '" + name + "' has unsupported type " +
                      std::string(traits(info.type).name));
  }
  std::vector<float> out(n);
  ops->to_float(file.tensor_data(info).data(), out.data(), static_cast<int64_t>(n));
  return out;
}

}  // namespace

ModelWeights ModelWeights::from_gguf(const GgufFile& file, ModelConfig& c) {
  ModelWeights w;
  if (file.tensors().empty()) {
    throw FormatError(file.name() + " holds no tensors: it is not a model (a vocab-only file?)");
  }
  const GgufTensorInfo& embd = file.tensor_info("token_embd.weight");
  w.token_embd = matrix_of(file, embd, c.n_embd, 0);
  if (w.token_embd.rows < 1 || w.token_embd.rows > (1 << 24)) {
    throw FormatError(file.name() + ": token_embd.weight has an implausible vocabulary of " +
                      std::to_string(w.token_embd.rows) + " tokens");
  }
  c.n_vocab = static_cast<uint32_t>(w.token_embd.rows);
  w.output_norm = vector_of(file, "output_norm.weight", c.n_embd);
  if (file.find_tensor("output.weight") != nullptr) {
    w.output = matrix(file, "output.weight", c.n_embd, c.n_vocab);
  } else {
    w.output = w.token_embd;
    w.tied_output = true;
  }

  w.layers.resize(c.n_layer);
  for (uint32_t i = 0; i < c.n_layer; ++i) {
    LayerWeights& l = w.layers[i];
    l.attn_norm = vector_of(file, blk(i, "attn_norm.weight"), c.n_embd);
    l.wq = matrix(file, blk(i, "attn_q.weight"), c.n_embd, c.q_dim());
    l.wk = matrix(file, blk(i, "attn_k.weight"), c.n_embd, c.kv_dim());
    l.wv = matrix(file, blk(i, "attn_v.weight"), c.n_embd, c.kv_dim());
    l.wo = matrix(file, blk(i, "attn_output.weight"), c.q_dim(), c.n_embd);
    // Biases: required by qwen2, honoured wherever a file has them.
    const bool has_bias = file.find_tensor(blk(i, "attn_q.bias")) != nullptr;
    if (c.attention_bias || has_bias) {
      l.bq = vector_of(file, blk(i, "attn_q.bias"), c.q_dim());
      l.bk = vector_of(file, blk(i, "attn_k.bias"), c.kv_dim());
      l.bv = vector_of(file, blk(i, "attn_v.bias"), c.kv_dim());
    }
    l.ffn_norm = vector_of(file, blk(i, "ffn_norm.weight"), c.n_embd);
    l.w_gate = matrix(file, blk(i, "ffn_gate.weight"), c.n_embd, c.n_ff);
    l.w_up = matrix(file, blk(i, "ffn_up.weight"), c.n_embd, c.n_ff);
    l.w_down = matrix(file, blk(i, "ffn_down.weight"), c.n_ff, c.n_embd);
  }

  if (file.find_tensor("rope_freqs.weight") != nullptr) {
    w.rope_freq_factors = vector_of(file, "rope_freqs.weight", c.n_rot / 2);
    for (float f : w.rope_freq_factors) {
      if (!(f > 0.0f) || !std::isfinite(f)) {
        throw FormatError(file.name() + ": rope_freqs.weight holds a factor that is not positive");
      }
    }
  }
  return w;
}

}  // namespace nvhcq::llm
