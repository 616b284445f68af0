#pragma once
// The generation loop's Decoder on the GPU engine. Greedy sampling without a
// repetition penalty takes the argmax the GPU computed (4 bytes cross to the
// host); anything else downloads the logits and samples on the CPU.

#include <vector>

#include "llm/gpu/gpu_llama.h"
#include "llm/model/decoder.h"

namespace nvhcq::llm {

class GpuDecoder final : public Decoder {
 public:
  explicit GpuDecoder(GpuLlama& gpu) : gpu_(gpu) {}
  void forward(std::span<const int32_t> tokens) override { gpu_.forward(tokens); }
  int32_t choose(Sampler& sampler) override {
    const SamplerParams& p = sampler.params();
    if (p.temperature <= 0.0f && p.repeat_penalty == 1.0f) return gpu_.greedy_token();
    gpu_.logits(logits_);
    return sampler.sample(logits_);
  }
  int position() const override { return gpu_.position(); }
  int capacity() const override { return gpu_.context(); }

 private:
  GpuLlama& gpu_;
  std::vector<float> logits_;
};

}  // namespace nvhcq::llm
