#pragma once
// GPT-2's byte-level encoding: every byte maps to one printable code point so that
// BPE vocabularies hold any byte sequence as text. Printable Latin-1 bytes
// ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) map to themselves, the other 68 bytes
// to U+0100 onwards in byte order (so ' ' is 'Ġ' U+0120 and '\n' is 'Ċ' U+010A).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvhcq::llm {

// The code point byte `b` is written as.
uint32_t byte_to_codepoint(uint8_t b);
// The byte a code point stands for, or nullopt for a code point outside the map.
std::optional<uint8_t> codepoint_to_byte(uint32_t cp);

// Encodes raw bytes as byte-level text (UTF-8 of the mapped code points).
std::string byte_level_encode(std::string_view bytes);
// Decodes byte-level text back to bytes. A code point outside the map (text that
// was not byte-level encoded) is kept as its own UTF-8.
std::string byte_level_decode(std::string_view text);

}  // namespace nvhcq::llm
