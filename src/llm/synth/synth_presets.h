#pragma once
// Model shapes `nvhcq synth` can make: two small ones of our own and the exact
// shapes of real LLaMA models (whose speed is what matters; their weights are
// random).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nvhcq::llm {

struct SynthPreset {
  std::string_view name;
  uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  float rope_freq_base;
  float rms_eps;
  bool tied_output;
  // Llama-3.1 RoPE scaling (written as rope_freqs.weight), when llama3_factor > 0.
  float llama3_factor = 0.0f;
  float llama3_low_freq_factor = 1.0f;
  float llama3_high_freq_factor = 4.0f;
  uint32_t llama3_original_context = 8192;
};

std::span<const SynthPreset> synth_presets();
std::optional<SynthPreset> find_synth_preset(std::string_view name);
// "tiny, small, llama-3.2-1b, ..."
std::string synth_preset_names();

}  // namespace nvhcq::llm
