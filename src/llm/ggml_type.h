#pragma once
// The tensor element types of GGUF files (ggml's type ids), with the block
// geometry of each: how many elements a block holds and how many bytes it takes.
// Ids and sizes are ggml's, so files move between nvhcq and llama.cpp unchanged.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nvhcq::llm {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;  // ggml's name: "f32", "q4_K", ...
  uint32_t block_elements;  // elements per block (1 for plain types)
  uint32_t block_bytes;     // bytes per block
  bool quantized;
};

// The traits of a known type id, or nullopt for an id ggml does not define.
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t id);
// Same, for a type known to be valid; throws FormatError otherwise.
const GgmlTypeTraits& traits(GgmlType type);
// Finds a type by ggml's name (case-insensitive: "q4_k" == "q4_K").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);
// Bytes taken by `elements` values of `type`; throws FormatError when `elements`
// is not a whole number of blocks or the size overflows.
uint64_t ggml_row_bytes(GgmlType type, uint64_t elements);

}  // namespace nvhcq::llm
