#include "llm/tokenizer/byte_level.h"

#include <array>

#include "llm/tokenizer/unicode.h"

namespace nvhcq::llm {
namespace {

struct ByteMap {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 324> to_byte{};  // indexed by code point; -1 when unmapped

  ByteMap() {
    to_byte.fill(-1);
    auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_cp[b] = printable(b) ? static_cast<uint32_t>(b) : next++;
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t b) { return byte_map().to_cp[b]; }

std::optional<uint8_t> codepoint_to_byte(uint32_t cp) {
  const auto& m = byte_map();
  if (cp >= m.to_byte.size() || m.to_byte[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(m.to_byte[cp]);
}

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) unicode::append_utf8(out, byte_to_codepoint(b));
  return out;
}

std::string byte_level_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (uint32_t cp : unicode::decode_utf8(text)) {
    if (auto b = codepoint_to_byte(cp)) {
      out += static_cast<char>(*b);
    } else {
      unicode::append_utf8(out, cp);
    }
  }
  return out;
}

}  // namespace nvhcq::llm
