#pragma once
// The generation loop: process the prompt in one batch, then sample a token,
// hand it to the caller (who streams it), and run it through the model, until an
// end-of-generation token, the token limit, a full context or the caller says stop.
// Times the prompt pass and the decode steps separately.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "cpu/thread_pool.h"
#include "llm/model/decoder.h"
#include "llm/model/llama_model.h"
#include "llm/sampler/sampler.h"

namespace nvhcq::llm {

struct GenerationOptions {
  int max_tokens = 128;  // tokens to generate at most (< 0: until the context is full)
  // Tokens that end generation (EOS/EOT of the tokenizer); none when empty.
  std::function<bool(int32_t)> is_end;
};

struct GenerationStats {
  int prompt_tokens = 0;
  double prompt_seconds = 0.0;  // the prompt's forward pass
  int generated_tokens = 0;     // tokens sampled and handed out (an end token is not counted)
  int decode_passes = 0;        // single-token forward passes
  double decode_seconds = 0.0;  // those passes plus sampling
  enum class Stop { kEndToken, kTokenLimit, kContextFull, kCaller };
  Stop stop = Stop::kTokenLimit;

  double prompt_tokens_per_second() const {
    return prompt_seconds > 0 ? prompt_tokens / prompt_seconds : 0.0;
  }
  double decode_tokens_per_second() const {
    return decode_seconds > 0 ? decode_passes / decode_seconds : 0.0;
  }
  std::string stop_reason() const;
};

// Runs generation from `prompt` (at least one token) on whatever the decoder
// holds already. `on_token` gets each generated token and returns false to stop.
GenerationStats generate(Decoder& decoder, Sampler& sampler, std::span<const int32_t> prompt,
                         const GenerationOptions& options, const std::function<bool(int32_t)>& on_token);

// The same on the CPU, on an empty or partly filled cache.
GenerationStats generate(LlamaModel& model, KvCache& cache, cpu::ThreadPool& pool, Sampler& sampler,
                         std::span<const int32_t> prompt, const GenerationOptions& options,
                         const std::function<bool(int32_t)>& on_token);

}  // namespace nvhcq::llm
