#pragma once
// Tiny synthetic models for the model, synth and command tests: written once per
// test process into a temporary folder (removed at exit) with `nvhcq synth`'s
// library code, and shared by every test that asks for the same kind.

#include <string>

#include "llm/quant/ftype_mix.h"

namespace nvhcq::llm::model_test {

// The path of a tiny-preset model of `arch` (llama, mistral, qwen2) at `ftype`,
// seed 7, with the built-in tokenizer. With `llama3_rope`, the model also has
// Llama-3.1 RoPE scaling (a rope_freqs.weight tensor; factor 8, original context 8192).
const std::string& tiny_model(const std::string& arch = "llama",
                              LlamaFtype ftype = LlamaFtype::ALL_F32, bool llama3_rope = false);
// A fresh path inside the temporary folder (nothing is created there).
std::string temp_path(const std::string& name);

}  // namespace nvhcq::llm::model_test
