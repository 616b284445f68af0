#pragma once
// What the generation loop needs from a model on some backend: run the prompt,
// choose the next token from the last logits, run one more token. The CPU
// implementation is here; the GPU one is llm/gpu/gpu_decoder.h.

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/thread_pool.h"
#include "llm/model/kv_cache.h"
#include "llm/model/llama_model.h"
#include "llm/sampler/sampler.h"

namespace nvhcq::llm {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Runs tokens at the next positions (the prompt, or one decoded token).
  virtual void forward(std::span<const int32_t> tokens) = 0;
  // The next token from the logits of the last token run.
  virtual int32_t choose(Sampler& sampler) = 0;
  // Positions held, and the most the context can hold.
  virtual int position() const = 0;
  virtual int capacity() const = 0;
};

class CpuDecoder final : public Decoder {
 public:
  CpuDecoder(LlamaModel& model, KvCache& cache, cpu::ThreadPool& pool) : model_(model), cache_(cache), pool_(pool) {}
  void forward(std::span<const int32_t> tokens) override { model_.forward(tokens, cache_, pool_, logits_); }
  int32_t choose(Sampler& sampler) override { return sampler.sample(logits_); }
  int position() const override { return cache_.size(); }
  int capacity() const override { return cache_.capacity(); }

 private:
  LlamaModel& model_;
  KvCache& cache_;
  cpu::ThreadPool& pool_;
  std::vector<float> logits_;
};

}  // namespace nvhcq::llm
