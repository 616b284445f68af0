#include "llm/tokenizer/split_patterns.h"

#include <algorithm>
#include <span>

namespace nvhcq::llm::split {
namespace {

using unicode::kLetter;
using unicode::kNumber;
using unicode::kPunctuation;
using unicode::kWhitespace;

struct Range {
  uint32_t first, last;
};

bool in_ranges(std::span<const Range> ranges, uint32_t cp) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](uint32_t v, const Range& r) { return v < r.first; });
  return it != ranges.begin() && cp <= std::prev(it)->last;
}

// DeepSeek LLM's letter class: the cased letters (Lu, Ll, Lt) of the Unicode
// version its tokenizer was made with, as ranges.
constexpr Range kDeepseekLetters[] = {
    {0x41, 0x5A},       {0x61, 0x7A},       {0xB5, 0xB5},       {0xC0, 0xD6},
    {0xD8, 0xF6},       {0xF8, 0x1BA},      {0x1BC, 0x1BF},     {0x1C4, 0x293},
    {0x295, 0x2AF},     {0x370, 0x373},     {0x376, 0x377},     {0x37B, 0x37D},
    {0x37F, 0x37F},     {0x386, 0x386},     {0x388, 0x38A},     {0x38C, 0x38C},
    {0x38E, 0x3A1},     {0x3A3, 0x3F5},     {0x3F7, 0x481},     {0x48A, 0x52F},
    {0x531, 0x556},     {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},
    {0x1C90, 0x1CBA},   {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},
    {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},   {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},
    {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},   {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},
    {0x1FD6, 0x1FDB},   {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},
    {0x2102, 0x2102},   {0x2107, 0x2107},   {0x210A, 0x2113},   {0x2115, 0x2115},
    {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},   {0x2128, 0x2128},
    {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},
    {0x2C7E, 0x2CE4},   {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},
    {0xA680, 0xA69B},   {0xA722, 0xA76F},   {0xA771, 0xA787},   {0xA78B, 0xA78E},
    {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},   {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

// [!-/:-~！-／：-～‘-‟　-。], sorted.
constexpr Range kDeepseekPunctuation[] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0x2018, 0x201F}, {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

// [一-龥ࠀ-一가-퟿], sorted: U+0800..U+4E00 overlaps U+4E00..U+9FA5 at one point.
constexpr Range kCjk[] = {{0x0800, 0x9FA5}, {0xAC00, 0xD7FF}};

// Length of the run of positions from `pos` satisfying pred.
template <typename Pred>
size_t run(size_t pos, size_t end, Pred pred) {
  size_t p = pos;
  while (p < end && pred(p)) ++p;
  return p - pos;
}

// \s?X+ where X is given by pred over positions.
template <typename Pred>
size_t optional_space_then_run(const Text& t, size_t pos, size_t end, Pred pred) {
  if ((t.flags[pos] & kWhitespace) && pos + 1 < end && pred(pos + 1)) {
    return 1 + run(pos + 1, end, pred);
  }
  return run(pos, end, pred);
}

// 's 't 'm 'd 're 've 'll at pos: the length, or 0.
size_t contraction(const Text& t, size_t pos, size_t end, bool ignore_case) {
  if (t.cps[pos] != '\'' || pos + 1 >= end) return 0;
  auto at = [&](size_t i) { return ignore_case ? unicode::to_lower(t.cps[i]) : t.cps[i]; };
  const uint32_t a = at(pos + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= end) return 0;
  const uint32_t b = at(pos + 2);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// Neither whitespace, letter nor number (the class [^\s\p{L}\p{N}]); never true
// past the piece's end.
bool is_other(uint8_t f) { return f != 0 && !(f & (kWhitespace | kLetter | kNumber)); }

// \s+(?!\S)|\s+ at pos (after the other alternatives failed): a run of n
// whitespace followed by more text leaves its last one to prefix the next word.
size_t whitespace_run(const Text& t, size_t pos, size_t end) {
  const size_t n = run(pos, end, [&](size_t i) { return (t.flags[i] & kWhitespace) != 0; });
  if (n > 1 && pos + n < end) return n - 1;
  return n;
}

size_t llama3_like(const Text& t, size_t pos, size_t end, size_t max_digits) {
  if (size_t n = contraction(t, pos, end, /*ignore_case=*/true)) return n;
  const uint32_t c = t.cps[pos];
  const uint8_t f = t.flags[pos];
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c != '\r' && c != '\n' && !(f & kNumber)) {
    if ((f & kLetter) || (t.flags_at(pos + 1, end) & kLetter)) {
      return 1 + run(pos + 1, end, [&](size_t i) { return (t.flags[i] & kLetter) != 0; });
    }
  }
  // \p{N}{1,max_digits}
  if (f & kNumber) {
    return std::min(max_digits, run(pos, end, [&](size_t i) { return (t.flags[i] & kNumber) != 0; }));
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const size_t skip = c == ' ' ? 1 : 0;
  if (is_other(t.flags_at(pos + skip, end))) {
    size_t p = pos + skip;
    while (is_other(t.flags_at(p, end))) ++p;
    while (p < end && (t.cps[p] == '\r' || t.cps[p] == '\n')) ++p;
    return p - pos;
  }
  // \s*[\r\n]+ : whitespace up to and including its last line break.
  size_t n = 0, last_break = 0;
  while (pos + n < end && (t.flags[pos + n] & kWhitespace)) {
    if (t.cps[pos + n] == '\r' || t.cps[pos + n] == '\n') last_break = n + 1;
    ++n;
  }
  if (last_break > 0) return last_break;
  if (size_t w = whitespace_run(t, pos, end)) return w;
  return 1;  // nothing matched: the character stands alone
}

}  // namespace

Text::Text(std::vector<uint32_t> code_points) : cps(std::move(code_points)) {
  flags.resize(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) flags[i] = unicode::flags(cps[i]);
}

size_t gpt2_words(const Text& t, size_t pos, size_t end) {
  if (size_t n = contraction(t, pos, end, /*ignore_case=*/false)) return n;
  const uint32_t c = t.cps[pos];
  // An optional leading ' ' (U+0020 only) before letters, numbers or other symbols.
  const size_t skip = c == ' ' ? 1 : 0;
  const uint8_t f = t.flags_at(pos + skip, end);
  auto run_of = [&](auto pred) {
    size_t p = pos + skip;
    while (p < end && pred(t.flags[p])) ++p;
    return p - pos;
  };
  if (f & kLetter) return run_of([](uint8_t g) { return (g & kLetter) != 0; });
  if (f & kNumber) return run_of([](uint8_t g) { return (g & kNumber) != 0; });
  if (is_other(f)) return run_of(is_other);
  if (size_t w = whitespace_run(t, pos, end)) return w;
  return 1;  // nothing matched: the character stands alone
}

size_t llama3_words(const Text& t, size_t pos, size_t end) { return llama3_like(t, pos, end, 3); }
size_t qwen2_words(const Text& t, size_t pos, size_t end) { return llama3_like(t, pos, end, 1); }

size_t number(const Text& t, size_t pos, size_t) { return (t.flags[pos] & kNumber) ? 1 : 0; }

size_t number_run(const Text& t, size_t pos, size_t end) {
  return run(pos, end, [&](size_t i) { return (t.flags[i] & kNumber) != 0; });
}

size_t ascii_digit_triple(const Text& t, size_t pos, size_t end) {
  if (pos + 3 > end) return 0;
  for (size_t i = pos; i < pos + 3; ++i) {
    if (t.cps[i] < '0' || t.cps[i] > '9') return 0;
  }
  return 3;
}

size_t falcon_punctuation(const Text& t, size_t pos, size_t end) {
  return run(pos, end, [&](size_t i) {
    const uint32_t c = t.cps[i];
    return (t.flags[i] & kPunctuation) || c == '$' || c == '+' || c == '<' || c == '=' ||
           c == '>' || c == '^' || c == '~' || c == '|' || c == '`';
  });
}

size_t default_punctuation(const Text& t, size_t pos, size_t end) {
  return run(pos, end, [&](size_t i) {
    const uint32_t c = t.cps[i];
    return (t.flags[i] & kPunctuation) || c == '$' || c == '+' || c == '<' || c == '=' ||
           c == '>' || c == '^' || c == '~' || c == '|';
  });
}

size_t line_break(const Text& t, size_t pos, size_t) {
  return (t.cps[pos] == '\r' || t.cps[pos] == '\n') ? 1 : 0;
}

size_t space_letters(const Text& t, size_t pos, size_t end) {
  return optional_space_then_run(t, pos, end,
                                 [&](size_t i) { return (t.flags[i] & kLetter) != 0; });
}

size_t space_punctuation(const Text& t, size_t pos, size_t end) {
  return optional_space_then_run(t, pos, end,
                                 [&](size_t i) { return (t.flags[i] & kPunctuation) != 0; });
}

size_t cjk_run(const Text& t, size_t pos, size_t end) {
  return run(pos, end, [&](size_t i) { return in_ranges(kCjk, t.cps[i]); });
}

size_t deepseek_letters(const Text& t, size_t pos, size_t end) {
  return optional_space_then_run(t, pos, end, [&](size_t i) {
    return in_ranges(kDeepseekLetters, t.cps[i]);
  });
}

size_t deepseek_punctuation(const Text& t, size_t pos, size_t end) {
  return optional_space_then_run(t, pos, end, [&](size_t i) {
    return in_ranges(kDeepseekPunctuation, t.cps[i]);
  });
}

}  // namespace nvhcq::llm::split
