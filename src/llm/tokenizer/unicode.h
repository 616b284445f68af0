#pragma once
// Unicode facts the tokenizers need: the general category and whitespace of a
// code point, lower case, and UTF-8 decoding/encoding that never fails (invalid
// bytes become U+FFFD one byte at a time, as llama.cpp does, so token ids match).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nvhcq::llm::unicode {

// Category flags; scripts/gen_unicode_tables.py uses the same bits.
enum Flag : uint8_t {
  kNumber = 1 << 0,       // \p{N}
  kLetter = 1 << 1,       // \p{L}
  kSeparator = 1 << 2,    // \p{Z}
  kMark = 1 << 3,         // \p{M}
  kPunctuation = 1 << 4,  // \p{P}
  kSymbol = 1 << 5,       // \p{S}
  kOther = 1 << 6,        // \p{C}, unassigned code points included
  kWhitespace = 1 << 7,   // the White_Space property (\s)
};

inline constexpr uint32_t kReplacementChar = 0xFFFD;
inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// The flags of a code point; 0 beyond U+10FFFF.
uint8_t flags(uint32_t cp);
inline bool is_letter(uint32_t cp) { return flags(cp) & kLetter; }
inline bool is_number(uint32_t cp) { return flags(cp) & kNumber; }
inline bool is_whitespace(uint32_t cp) { return flags(cp) & kWhitespace; }
inline bool is_punctuation(uint32_t cp) { return flags(cp) & kPunctuation; }

// The first code point of cp's lower-case mapping (cp itself when it has none).
uint32_t to_lower(uint32_t cp);

// Bytes a UTF-8 sequence with this lead byte claims (1 for continuation or
// invalid lead bytes, so a scan always advances).
inline size_t utf8_length(uint8_t lead) {
  static constexpr uint8_t kByHighNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kByHighNibble[lead >> 4];
}

// Decodes UTF-8; each byte that does not start a complete sequence becomes U+FFFD,
// as do sequences that decode beyond U+10FFFF.
std::vector<uint32_t> decode_utf8(std::string_view text);
void append_utf8(std::string& out, uint32_t cp);
std::string encode_utf8(uint32_t cp);

}  // namespace nvhcq::llm::unicode
