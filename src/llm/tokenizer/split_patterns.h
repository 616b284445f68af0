#pragma once
// The split patterns pre-tokenizers are made of, each a hand-written matcher for
// one regex of a model's tokenizer. A matcher looks at text[pos, end) (it never
// sees past `end`, the end of the piece being split) and returns the length of the
// match starting at pos, 0 when the pattern does not match there. \s is Unicode
// White_Space. Matching follows the regex semantics of the Hugging Face
// tokenizers the models were trained with (as llama.cpp does, except where noted).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "llm/tokenizer/unicode.h"

namespace nvhcq::llm::split {

// Text as code points with their Unicode flags, computed once per text.
struct Text {
  std::vector<uint32_t> cps;
  std::vector<uint8_t> flags;

  explicit Text(std::vector<uint32_t> code_points);

  // Flags of position i of a piece ending at `end`: 0 past the piece (no class
  // matches there).
  uint8_t flags_at(size_t i, size_t end) const { return i < end ? flags[i] : 0; }
};

using Matcher = size_t (*)(const Text& t, size_t pos, size_t end);

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t gpt2_words(const Text& t, size_t pos, size_t end);
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t llama3_words(const Text& t, size_t pos, size_t end);
// The same with \p{N} in place of \p{N}{1,3} (Qwen2).
size_t qwen2_words(const Text& t, size_t pos, size_t end);

size_t number(const Text& t, size_t pos, size_t end);             // \p{N}
size_t number_run(const Text& t, size_t pos, size_t end);         // \p{N}+
size_t ascii_digit_triple(const Text& t, size_t pos, size_t end); // [0-9][0-9][0-9]
size_t falcon_punctuation(const Text& t, size_t pos, size_t end); // [\p{P}\$\+<=>\^~\|`]+
size_t default_punctuation(const Text& t, size_t pos, size_t end);// [\p{P}\$\+<=>\^~\|]+
size_t line_break(const Text& t, size_t pos, size_t end);         // [\r\n]
size_t space_letters(const Text& t, size_t pos, size_t end);      // \s?\p{L}+
size_t space_punctuation(const Text& t, size_t pos, size_t end);  // \s?\p{P}+
// [一-龥ࠀ-一가-퟿]+ : CJK ideographs, U+0800..U+4E00 and Hangul. (llama.cpp
// folds non-ASCII whitespace to U+000B before matching, which takes U+2000..U+200A
// and U+3000 out of this class; the Hugging Face tokenizers, and nvhcq, do not.)
size_t cjk_run(const Text& t, size_t pos, size_t end);
// DeepSeek LLM: \s?[<cased letters>]+ and \s?[!-/:-~！-／：-～‘-‟　-。]+
size_t deepseek_letters(const Text& t, size_t pos, size_t end);
size_t deepseek_punctuation(const Text& t, size_t pos, size_t end);

}  // namespace nvhcq::llm::split
