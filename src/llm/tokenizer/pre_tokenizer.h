#pragma once
// Pre-tokenizers of byte-level BPE vocabularies: they cut text into words before
// BPE merges run inside each word. Each kind is a fixed sequence of split patterns
// (the regexes of the model's tokenizer.json, as llama.cpp applies them): every
// pattern re-splits every piece the previous one left, keeping both the matches
// and the text between them. The patterns are matched by hand-written code over
// code points and Unicode categories (no std::regex, which is wrong for UTF-8).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvhcq::llm {

enum class PreTokenizer {
  kDefault,        // llama.cpp's fallback for BPE files without tokenizer.ggml.pre
  kGpt2,           // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3,         // the llama-3 pattern: case-insensitive contractions, \p{N}{1,3}, newlines
  kQwen2,          // the llama-3 pattern with single digits (\p{N})
  kDeepseekLlm,    // newlines, cased letters, ASCII/CJK punctuation, trailing spaces, CJK, numbers
  kDeepseekCoder,  // newlines, \s?\p{L}+, \s?\p{P}+, CJK, single digits
  kFalcon,         // punctuation runs, the GPT-2 pattern, digit triples
  kStarcoder,      // single digits, then the GPT-2 pattern
};

// What a tokenizer.ggml.pre value implies besides the split patterns (llama.cpp's
// per-model settings for byte-level BPE vocabularies).
struct PreTokenizerSettings {
  PreTokenizer kind;
  bool ignore_merges = false;  // a word that is a whole token skips BPE (LLaMA 3)
  bool add_bos = false;        // the default of tokenizer.ggml.add_bos_token
  bool clean_spaces = true;    // detokenizing may drop spaces before punctuation
  bool has_bos = true;         // false: the model has no BOS token (GLM-4)
};

// The settings for a tokenizer.ggml.pre value (llama.cpp's names and aliases), or
// nullopt for a name nvhcq does not know.
std::optional<PreTokenizerSettings> pre_tokenizer_from_name(std::string_view name);
std::string_view pre_tokenizer_name(PreTokenizer kind);

// Splits `text` into words, each the UTF-8 of its code points (bytes that are not
// valid UTF-8 become U+FFFD). Concatenated, the words give back valid UTF-8 text.
std::vector<std::string> pre_tokenize(PreTokenizer kind, std::string_view text);

}  // namespace nvhcq::llm
