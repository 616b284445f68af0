#include "llm/synth/synth_presets.h"

namespace nvhcq::llm {
namespace {

// tiny:  the test model — K-quant friendly rows (256, 768), GQA (4 heads on 2 KV
//        heads), small enough for a float64 reference forward pass in a test.
// small: ~100M parameters (Llama-2-like, untied output, 32000 tokens): large enough
//        that CPU generation speed measures the weight products, not overheads.
// The llama presets are the published shapes.
constexpr SynthPreset kPresets[] = {
    {"tiny", 256, 2, 4, 2, 768, 1024, 512, 10000.0f, 1e-5f, false},
    {"small", 768, 12, 12, 4, 2048, 32000, 4096, 10000.0f, 1e-5f, false},
    {"llama-3.2-1b", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, 1e-5f, true, 32.0f, 1.0f,
     4.0f, 8192},
    {"llama-3.2-3b", 3072, 28, 24, 8, 8192, 128256, 131072, 500000.0f, 1e-5f, true, 32.0f, 1.0f,
     4.0f, 8192},
    {"llama-3.1-8b", 4096, 32, 32, 8, 14336, 128256, 131072, 500000.0f, 1e-5f, false, 8.0f, 1.0f,
     4.0f, 8192},
};

}  // namespace

std::span<const SynthPreset> synth_presets() {
  return kPresets;
}

std::optional<SynthPreset> find_synth_preset(std::string_view name) {
  for (const SynthPreset& p : kPresets) {
    if (p.name == name) return p;
  }
  return std::nullopt;
}

std::string synth_preset_names() {
  std::string out;
  for (const SynthPreset& p : kPresets) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace nvhcq::llm
