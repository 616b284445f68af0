#pragma once
// Writes a LLaMA-family GGUF model with seeded random weights at a preset's shape,
// quantized with llama.cpp's mix for the chosen file type, with a real tokenizer.
// The file loads in nvhcq and in llama.cpp; only the weights are meaningless.
//
// Weight scales keep activations sane: linear weights have standard deviation
// 1/sqrt(inputs) (unit-variance outputs from RMS-normalised inputs), norm weights
// sit near 1, and the output rows give logits of standard deviation ~3, so a
// random model still prefers some tokens and generates varied text. Rows of
// "quiet" tokens (padding, control tokens, unprintable bytes: SynthTokenizer::quiet)
// get 1/20 of that scale so the model rarely picks them.

#include <cstdint>
#include <functional>
#include <string>

#include "cpu/thread_pool.h"
#include "llm/quant/ftype_mix.h"
#include "llm/synth/synth_presets.h"

namespace nvhcq::llm {

struct SynthOptions {
  std::string arch = "llama";  // llama, mistral or qwen2 (Q/K/V biases, neox RoPE)
  SynthPreset preset;
  LlamaFtype ftype = LlamaFtype::MOSTLY_F16;
  std::string vocab_path;  // a GGUF with a tokenizer; empty: the built-in tokenizer
  uint64_t seed = 1;
  std::string output_path;
  // Called as tensors are written: the tensor's name and the fraction of all bytes done.
  std::function<void(const std::string& tensor, double fraction)> progress;
};

struct SynthResult {
  uint64_t file_bytes = 0;
  uint64_t parameters = 0;
  uint32_t n_vocab = 0;
  size_t tensors = 0;
};

SynthResult synthesize_model(const SynthOptions& options, cpu::ThreadPool& pool);

}  // namespace nvhcq::llm
