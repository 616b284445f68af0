#include "llm/ggml_type.h"

#include <cctype>
#include <string>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

// Block geometry from ggml's block structs: e.g. Q4_K is 256 values in
// 2 f16 scales + 12 scale bytes + 128 nibble bytes = 144 bytes.
constexpr GgmlTypeTraits kTraits[] = {
    {GgmlType::F32, "f32", 1, 4, false},
    {GgmlType::F16, "f16", 1, 2, false},
    {GgmlType::Q4_0, "q4_0", 32, 18, true},
    {GgmlType::Q4_1, "q4_1", 32, 20, true},
    {GgmlType::Q5_0, "q5_0", 32, 22, true},
    {GgmlType::Q5_1, "q5_1", 32, 24, true},
    {GgmlType::Q8_0, "q8_0", 32, 34, true},
    {GgmlType::Q8_1, "q8_1", 32, 36, true},
    {GgmlType::Q2_K, "q2_K", 256, 84, true},
    {GgmlType::Q3_K, "q3_K", 256, 110, true},
    {GgmlType::Q4_K, "q4_K", 256, 144, true},
    {GgmlType::Q5_K, "q5_K", 256, 176, true},
    {GgmlType::Q6_K, "q6_K", 256, 210, true},
    {GgmlType::Q8_K, "q8_K", 256, 292, true},
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66, true},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74, true},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98, true},
    {GgmlType::IQ1_S, "iq1_s", 256, 50, true},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18, true},
    {GgmlType::IQ3_S, "iq3_s", 256, 110, true},
    {GgmlType::IQ2_S, "iq2_s", 256, 82, true},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136, true},
    {GgmlType::I8, "i8", 1, 1, false},
    {GgmlType::I16, "i16", 1, 2, false},
    {GgmlType::I32, "i32", 1, 4, false},
    {GgmlType::I64, "i64", 1, 8, false},
    {GgmlType::F64, "f64", 1, 8, false},
    {GgmlType::IQ1_M, "iq1_m", 256, 56, true},
    {GgmlType::BF16, "bf16", 1, 2, false},
    {GgmlType::TQ1_0, "tq1_0", 256, 54, true},
    {GgmlType::TQ2_0, "tq2_0", 256, 66, true},
    {GgmlType::MXFP4, "mxfp4", 32, 17, true},
};

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t id) {
  for (const auto& t : kTraits) {
    if (static_cast<uint32_t>(t.type) == id) return t;
  }
  return std::nullopt;
}

const GgmlTypeTraits& traits(GgmlType type) {
  for (const auto& t : kTraits) {
    if (t.type == type) return t;
  }
  throw FormatError("unknown ggml type id " + std::to_string(static_cast<uint32_t>(type)));
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const auto& t : kTraits) {
    if (iequal(t.name, name)) return t.type;
  }
  return std::nullopt;
}

uint64_t ggml_row_bytes(GgmlType type, uint64_t elements) {
  const auto& t = traits(type);
  if (elements % t.block_elements != 0) {
    throw FormatError(std::to_string(elements) + " elements are not a whole number of " +
                      std::string(t.name) + " blocks of " + std::to_string(t.block_elements));
  }
  uint64_t blocks = elements / t.block_elements;
  if (blocks > UINT64_MAX / t.block_bytes) throw FormatError("tensor size overflows 64 bits");
  return blocks * t.block_bytes;
}

}  // namespace nvhcq::llm
