#pragma once
// An independent float64 forward pass of a LLaMA-family GGUF model, for tests.
// It reads hyperparameters and tensors from the file itself (not through
// llm/model), dequantizes every weight to double and computes the whole causal
// forward pass in double, following llama.cpp's definition of the graph.

#include <cstdint>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.h"

namespace nvhcq::llm::model_test {

struct ReferenceOptions {
  // Round keys and values to f16 where the model stores them in its f16 KV cache.
  bool round_kv_to_f16 = false;
  // Round every weight product's input as the CPU path does: quantized to the
  // weight format's activation type (Q8_0, Q8_K, F16, ...) and back. With this, the
  // model and the reference differ only by float32 arithmetic, even for
  // quantized weights.
  bool round_activations = false;
};

class ReferenceModel {
 public:
  explicit ReferenceModel(const GgufFile& file);

  // Logits of every position of `tokens` (token-major, n_vocab each).
  std::vector<double> forward(const std::vector<int32_t>& tokens,
                              const ReferenceOptions& options = {}) const;

  int n_vocab() const { return n_vocab_; }

 private:
  struct Matrix {
    int rows = 0, cols = 0;
    GgmlType activation_type = GgmlType::F32;  // the vec_dot partner of the weight type
    std::vector<double> v;                     // row-major
  };
  struct Layer {
    std::vector<double> attn_norm, ffn_norm, bq, bk, bv;
    Matrix wq, wk, wv, wo, gate, up, down;
  };
  Matrix matrix(const GgufFile& f, const std::string& name) const;
  std::vector<double> vector(const GgufFile& f, const std::string& name) const;
  static std::vector<double> matvec(const Matrix& m, const std::vector<double>& x, bool round);
  std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<double>& w) const;
  void rope(std::vector<double>& x, int n_heads, int pos) const;

  bool neox_ = false;
  int n_layer_ = 0, n_embd_ = 0, n_head_ = 0, n_head_kv_ = 0, head_dim_ = 0, n_rot_ = 0;
  int n_vocab_ = 0;
  double eps_ = 1e-5, base_ = 10000.0;
  std::vector<double> freq_factors_;
  Matrix embd_, output_;
  std::vector<double> output_norm_;
  std::vector<Layer> layers_;
};

}  // namespace nvhcq::llm::model_test
