#pragma once
// The value types of GGUF metadata (the `gguf_type` ids of the file format) and
// the constants of the format itself. Ids are the file's, so they never change.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nvhcq::llm {

enum class GgufType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

// "GGUF" as the first four bytes of a file.
inline constexpr char kGgufMagic[4] = {'G', 'G', 'U', 'F'};
// Versions this reader accepts. Version 1 used 32-bit counts and is long gone;
// version 3 only added big-endian files (which nvhcq does not read).
inline constexpr uint32_t kGgufMinVersion = 2;
inline constexpr uint32_t kGgufMaxVersion = 3;
inline constexpr uint32_t kGgufDefaultVersion = 3;
// Tensor data is aligned to this many bytes unless general.alignment says otherwise.
inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr std::string_view kGgufAlignmentKey = "general.alignment";
// ggml's limits: a tensor has at most 4 dimensions and a name shorter than 64 bytes
// (llama.cpp refuses longer names, so the writer does too).
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr size_t kGgufMaxTensorNameBytes = 63;

// The type for an id read from a file, or nullopt for an id the format does not define.
std::optional<GgufType> gguf_type_from_id(uint32_t id);
// "u32", "string", "array", ...
std::string_view gguf_type_name(GgufType type);
// Bytes one value of a fixed-size type takes in the file; 0 for STRING and ARRAY.
size_t gguf_type_size(GgufType type);
// The fewest bytes a value of `type` can take in a file: its size, 8 for a string
// (its length), 12 for an array (element type + count). Used to bound counts
// read from a file by the bytes that remain before allocating anything.
size_t gguf_type_min_encoded_size(GgufType type);

}  // namespace nvhcq::llm
