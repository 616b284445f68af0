#include "llm/model/generator.h"

#include <chrono>
#include <vector>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string GenerationStats::stop_reason() const {
  switch (stop) {
    case Stop::kEndToken:
      return "end-of-generation token";
    case Stop::kTokenLimit:
      return "token limit";
    case Stop::kContextFull:
      return "context full";
    case Stop::kCaller:
      return "stopped";
  }
  return "?";
}

GenerationStats generate(Decoder& decoder, Sampler& sampler, std::span<const int32_t> prompt,
                         const GenerationOptions& options, const std::function<bool(int32_t)>& on_token) {
  if (prompt.empty()) throw UsageError("the prompt has no tokens");
  GenerationStats stats;
  auto t0 = std::chrono::steady_clock::now();
  decoder.forward(prompt);
  stats.prompt_seconds = seconds_since(t0);
  stats.prompt_tokens = static_cast<int>(prompt.size());
  for (int32_t id : prompt) sampler.accept(id);

  const int limit = options.max_tokens < 0 ? decoder.capacity() : options.max_tokens;
  t0 = std::chrono::steady_clock::now();
  while (stats.generated_tokens < limit) {
    const int32_t token = decoder.choose(sampler);
    sampler.accept(token);
    if (options.is_end && options.is_end(token)) {
      stats.stop = GenerationStats::Stop::kEndToken;
      break;
    }
    ++stats.generated_tokens;
    if (!on_token(token)) {
      stats.stop = GenerationStats::Stop::kCaller;
      break;
    }
    if (stats.generated_tokens == limit) break;  // the last token needs no forward pass
    if (decoder.position() >= decoder.capacity()) {
      stats.stop = GenerationStats::Stop::kContextFull;
      break;
    }
    decoder.forward(std::span<const int32_t>(&token, 1));
    ++stats.decode_passes;
  }
  stats.decode_seconds = seconds_since(t0);
  return stats;
}

GenerationStats generate(LlamaModel& model, KvCache& cache, cpu::ThreadPool& pool, Sampler& sampler,
                         std::span<const int32_t> prompt, const GenerationOptions& options,
                         const std::function<bool(int32_t)>& on_token) {
  CpuDecoder decoder(model, cache, pool);
  return generate(decoder, sampler, prompt, options, on_token);
}

}  // namespace nvhcq::llm
