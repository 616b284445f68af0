#pragma once
// A LLaMA-family model (llama, mistral, qwen2) running on the CPU from a GGUF file:
//
//   x = token_embd[tokens]
//   per layer:  x += Wo . attention(rope(Wq . norm(x)), rope(Wk . norm(x)), Wv . norm(x))
//               x += W_down . (silu(W_gate . norm(x)) * (W_up . norm(x)))
//   logits = W_out . norm(x)
//
// Weights are computed on in place in the file's mapping (see quantized_matmul.h).
// A forward pass takes any number of tokens (the prompt at once, or one token per
// decode step), appends their keys and values to a KvCache and returns logits.
// One LlamaModel runs one forward pass at a time (it owns its scratch buffers).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cpu/thread_pool.h"
#include "llm/gguf/gguf_file.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model_config.h"
#include "llm/model/model_weights.h"
#include "llm/model/quantized_matmul.h"
#include "llm/model/rope.h"

namespace nvhcq::llm {

class LlamaModel {
 public:
  // Reads hyperparameters and finds every weight; FormatError for a file that
  // is not a model nvhcq runs (naming what is wrong).
  explicit LlamaModel(GgufFile file);
  static std::unique_ptr<LlamaModel> open(const std::string& path);

  LlamaModel(const LlamaModel&) = delete;
  LlamaModel& operator=(const LlamaModel&) = delete;

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const GgufFile& file() const { return file_; }

  // Reads every weight page once so that the first tokens do not wait on the disk;
  // `progress` gets the fraction done now and then.
  void prefetch(const std::function<void(double)>& progress = {}) const;

  // A cache for `capacity` positions (at most the trained context is sensible).
  KvCache make_cache(int capacity, KvCacheType type = KvCacheType::kF16) const;

  // Runs `tokens` at positions cache.size() onwards and appends them to the cache.
  // logits gets n_vocab values for the last token, or, with all_logits, n_vocab
  // per token (token-major). Throws UsageError when the cache is too small or a
  // token id is outside the vocabulary; the cache is left as it was then.
  void forward(std::span<const int32_t> tokens, KvCache& cache, cpu::ThreadPool& pool,
               std::vector<float>& logits, bool all_logits = false);

  // Tokens processed per internal batch (bounds scratch memory on long prompts).
  int max_batch() const { return max_batch_; }
  void set_max_batch(int n) { max_batch_ = n < 1 ? 1 : n; }

 private:
  void forward_batch(const int32_t* tokens, int n, KvCache& cache, cpu::ThreadPool& pool,
                     float* logits, bool all_logits);
  void layer_forward(int layer, int n, int pos0, KvCache& cache, cpu::ThreadPool& pool);
  void reserve_scratch(int n);

  GgufFile file_;
  ModelConfig config_;
  ModelWeights weights_;
  Rope rope_;
  int max_batch_ = 256;

  // Scratch, sized for the largest batch seen.
  int scratch_tokens_ = 0;
  std::vector<float> x_, xn_, q_, k_, v_, attn_, tmp_, gate_, up_, cos_sin_;
  QuantizedActivations act_;
};

}  // namespace nvhcq::llm
