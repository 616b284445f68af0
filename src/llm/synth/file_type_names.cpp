#include "llm/synth/file_type_names.h"

#include <cctype>

namespace nvhcq::llm {
namespace {

constexpr LlamaFtype kListed[] = {
    LlamaFtype::ALL_F32,       LlamaFtype::MOSTLY_F16,    LlamaFtype::MOSTLY_BF16,
    LlamaFtype::MOSTLY_Q8_0,   LlamaFtype::MOSTLY_Q6_K,   LlamaFtype::MOSTLY_Q5_K_M,
    LlamaFtype::MOSTLY_Q5_K_S, LlamaFtype::MOSTLY_Q5_1,   LlamaFtype::MOSTLY_Q5_0,
    LlamaFtype::MOSTLY_Q4_K_M, LlamaFtype::MOSTLY_Q4_K_S, LlamaFtype::MOSTLY_Q4_1,
    LlamaFtype::MOSTLY_Q4_0,   LlamaFtype::MOSTLY_Q3_K_L, LlamaFtype::MOSTLY_Q3_K_M,
    LlamaFtype::MOSTLY_Q3_K_S, LlamaFtype::MOSTLY_Q2_K,
};

}  // namespace

std::optional<LlamaFtype> parse_file_type(std::string_view name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "Q3_K") return LlamaFtype::MOSTLY_Q3_K_M;
  if (upper == "Q4_K") return LlamaFtype::MOSTLY_Q4_K_M;
  if (upper == "Q5_K") return LlamaFtype::MOSTLY_Q5_K_M;
  return llama_ftype_from_name(upper);
}

std::string file_type_names() {
  std::string out;
  for (LlamaFtype f : kListed) {
    if (!out.empty()) out += ", ";
    for (char c : llama_ftype_name(f))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace nvhcq::llm
