#include "llm/tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <iterator>

#include "llm/tokenizer/unicode_tables.h"

namespace nvhcq::llm::unicode {

uint8_t flags(uint32_t cp) {
  if (cp > kMaxCodepoint) return 0;
  // ASCII is most of most text: answer it from a table built once.
  static const auto kAscii = [] {
    std::array<uint8_t, 128> t{};
    for (uint32_t c = 0; c < 128; ++c) {
      auto ranges = category_ranges();
      auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                                 [](uint32_t v, const CategoryRange& r) { return v < r.first; });
      t[c] = std::prev(it)->flags;
    }
    return t;
  }();
  if (cp < 128) return kAscii[cp];
  auto ranges = category_ranges();
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](uint32_t v, const CategoryRange& r) { return v < r.first; });
  return std::prev(it)->flags;
}

uint32_t to_lower(uint32_t cp) {
  if (cp < 128) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  auto map = lowercase_mappings();
  auto it = std::lower_bound(map.begin(), map.end(), cp,
                             [](const CaseMapping& m, uint32_t v) { return m.from < v; });
  return (it != map.end() && it->from == cp) ? it->to : cp;
}

std::vector<uint32_t> decode_utf8(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  auto continuation = [&](size_t k) { return i + k < n && (s[i + k] & 0xC0) == 0x80; };
  while (i < n) {
    const uint8_t b = s[i];
    uint32_t cp = kReplacementChar;
    size_t len = 1;
    if (b < 0x80) {
      cp = b;
    } else if ((b & 0xE0) == 0xC0 && continuation(1)) {
      cp = (uint32_t{b} & 0x1F) << 6 | (s[i + 1] & 0x3F);
      len = 2;
    } else if ((b & 0xF0) == 0xE0 && continuation(1) && continuation(2)) {
      cp = (uint32_t{b} & 0x0F) << 12 | (uint32_t{s[i + 1]} & 0x3F) << 6 | (s[i + 2] & 0x3F);
      len = 3;
    } else if ((b & 0xF8) == 0xF0 && continuation(1) && continuation(2) && continuation(3)) {
      cp = (uint32_t{b} & 0x07) << 18 | (uint32_t{s[i + 1]} & 0x3F) << 12 |
           (uint32_t{s[i + 2]} & 0x3F) << 6 | (s[i + 3] & 0x3F);
      len = 4;
      if (cp > kMaxCodepoint) {
        cp = kReplacementChar;
        len = 1;
      }
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp > kMaxCodepoint) cp = kReplacementChar;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string encode_utf8(uint32_t cp) {
  std::string out;
  append_utf8(out, cp);
  return out;
}

}  // namespace nvhcq::llm::unicode
