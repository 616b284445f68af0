#pragma once
// The file-type names `nvhcq synth --type` and `nvhcq quantize` accept:
// llama-quantize's names in any case ("q4_k_m", "Q8_0", "f16", "bf16", "f32"), and
// its aliases "q3_k", "q4_k", "q5_k" for the _M mixes.

#include <optional>
#include <string>
#include <string_view>

#include "llm/quant/ftype_mix.h"

namespace nvhcq::llm {

std::optional<LlamaFtype> parse_file_type(std::string_view name);
// "f32, f16, bf16, q8_0, ..." for help texts and errors.
std::string file_type_names();

}  // namespace nvhcq::llm
