#include "llm/tokenizer/pre_tokenizer.h"

#include <span>

#include "llm/tokenizer/split_patterns.h"
#include "llm/tokenizer/unicode.h"

namespace nvhcq::llm {
namespace {

// One split step: a pattern matcher, or (DeepSeek's \s+$) the piece's trailing
// whitespace, which a matcher scanning left to right would find in quadratic time.
struct Step {
  split::Matcher matcher;  // nullptr: trailing whitespace
};

constexpr Step kTrailingWhitespace{nullptr};

std::span<const Step> steps_of(PreTokenizer kind) {
  using namespace split;
  static constexpr Step kGpt2[] = {{gpt2_words}};
  static constexpr Step kLlama3[] = {{llama3_words}};
  static constexpr Step kQwen2[] = {{qwen2_words}};
  static constexpr Step kStarcoder[] = {{number}, {gpt2_words}};
  static constexpr Step kFalcon[] = {{falcon_punctuation}, {gpt2_words}, {ascii_digit_triple}};
  static constexpr Step kDeepseekLlm[] = {{line_break},         {deepseek_letters},
                                          {deepseek_punctuation}, kTrailingWhitespace,
                                          {cjk_run},            {number_run}};
  static constexpr Step kDeepseekCoder[] = {
      {line_break}, {space_letters}, {space_punctuation}, {cjk_run}, {number}};
  static constexpr Step kDefault[] = {
      {default_punctuation}, {gpt2_words}, {number_run}, {ascii_digit_triple}};
  switch (kind) {
    case PreTokenizer::kGpt2: return kGpt2;
    case PreTokenizer::kLlama3: return kLlama3;
    case PreTokenizer::kQwen2: return kQwen2;
    case PreTokenizer::kStarcoder: return kStarcoder;
    case PreTokenizer::kFalcon: return kFalcon;
    case PreTokenizer::kDeepseekLlm: return kDeepseekLlm;
    case PreTokenizer::kDeepseekCoder: return kDeepseekCoder;
    case PreTokenizer::kDefault: return kDefault;
  }
  return {};
}

// Splits each piece (given by its length) with one step; the text between matches
// is kept as pieces of its own.
std::vector<size_t> apply(const split::Text& t, const Step& step, const std::vector<size_t>& pieces) {
  std::vector<size_t> out;
  out.reserve(pieces.size() * 2);
  size_t begin = 0;
  for (size_t length : pieces) {
    const size_t end = begin + length;
    if (step.matcher == nullptr) {
      size_t tail = end;
      while (tail > begin && (t.flags[tail - 1] & unicode::kWhitespace)) --tail;
      if (tail > begin) out.push_back(tail - begin);
      if (tail < end) out.push_back(end - tail);
    } else {
      size_t pos = begin, gap = begin;
      while (pos < end) {
        const size_t n = step.matcher(t, pos, end);
        if (n == 0) {
          ++pos;
          continue;
        }
        if (gap < pos) out.push_back(pos - gap);
        out.push_back(n);
        pos += n;
        gap = pos;
      }
      if (gap < end) out.push_back(end - gap);
    }
    begin = end;
  }
  return out;
}

struct Name {
  std::string_view name;
  PreTokenizerSettings settings;
};

constexpr PreTokenizerSettings kPlain(PreTokenizer kind) { return {kind, false, false, true, true}; }
constexpr PreTokenizerSettings kNoCleanup(PreTokenizer kind) {
  return {kind, false, false, false, true};
}
constexpr PreTokenizerSettings kLlama3Family{PreTokenizer::kLlama3, true, true, true, true};
constexpr PreTokenizerSettings kNoBos{PreTokenizer::kLlama3, false, false, true, false};

// tokenizer.ggml.pre values, as llama.cpp's converter writes them.
constexpr Name kNames[] = {
    {"default", kPlain(PreTokenizer::kDefault)},
    {"gpt-2", kPlain(PreTokenizer::kGpt2)},
    {"phi-2", kPlain(PreTokenizer::kGpt2)},
    {"mpt", kPlain(PreTokenizer::kGpt2)},
    {"olmo", kPlain(PreTokenizer::kGpt2)},
    {"jais", kPlain(PreTokenizer::kGpt2)},
    {"jina-es", kPlain(PreTokenizer::kGpt2)},
    {"jina-de", kPlain(PreTokenizer::kGpt2)},
    {"jina-v2-es", kPlain(PreTokenizer::kGpt2)},
    {"jina-v2-de", kPlain(PreTokenizer::kGpt2)},
    {"gigachat", kPlain(PreTokenizer::kGpt2)},
    {"exaone4", kPlain(PreTokenizer::kGpt2)},
    {"llama3", kLlama3Family},
    {"llama-v3", kLlama3Family},
    {"llama-bpe", kLlama3Family},
    {"falcon3", kLlama3Family},
    {"pixtral", kLlama3Family},
    {"dbrx", kPlain(PreTokenizer::kLlama3)},
    {"smaug-bpe", kPlain(PreTokenizer::kLlama3)},
    {"chatglm-bpe", kNoBos},
    {"glm4", kNoBos},
    {"qwen2", kNoCleanup(PreTokenizer::kQwen2)},
    {"deepseek-r1-qwen", kNoCleanup(PreTokenizer::kQwen2)},
    {"stablelm2", kPlain(PreTokenizer::kQwen2)},
    {"megrez", kPlain(PreTokenizer::kQwen2)},
    {"deepseek-llm", kNoCleanup(PreTokenizer::kDeepseekLlm)},
    {"deepseek-coder", kNoCleanup(PreTokenizer::kDeepseekCoder)},
    {"falcon", kPlain(PreTokenizer::kFalcon)},
    {"starcoder", kPlain(PreTokenizer::kStarcoder)},
    {"refact", kPlain(PreTokenizer::kStarcoder)},
    {"command-r", kNoCleanup(PreTokenizer::kStarcoder)},
    {"smollm", kNoCleanup(PreTokenizer::kStarcoder)},
    {"codeshell", kPlain(PreTokenizer::kStarcoder)},
    {"exaone", kPlain(PreTokenizer::kStarcoder)},
    {"minerva-7b", kPlain(PreTokenizer::kStarcoder)},
};

}  // namespace

std::optional<PreTokenizerSettings> pre_tokenizer_from_name(std::string_view name) {
  for (const Name& n : kNames) {
    if (n.name == name) return n.settings;
  }
  return std::nullopt;
}

std::string_view pre_tokenizer_name(PreTokenizer kind) {
  switch (kind) {
    case PreTokenizer::kDefault: return "default";
    case PreTokenizer::kGpt2: return "gpt-2";
    case PreTokenizer::kLlama3: return "llama3";
    case PreTokenizer::kQwen2: return "qwen2";
    case PreTokenizer::kDeepseekLlm: return "deepseek-llm";
    case PreTokenizer::kDeepseekCoder: return "deepseek-coder";
    case PreTokenizer::kFalcon: return "falcon";
    case PreTokenizer::kStarcoder: return "starcoder";
  }
  return "unknown";
}

std::vector<std::string> pre_tokenize(PreTokenizer kind, std::string_view text) {
  split::Text t(unicode::decode_utf8(text));
  if (t.cps.empty()) return {};
  std::vector<size_t> pieces{t.cps.size()};
  for (const Step& step : steps_of(kind)) pieces = apply(t, step, pieces);

  std::vector<std::string> words;
  words.reserve(pieces.size());
  size_t begin = 0;
  for (size_t length : pieces) {
    std::string word;
    for (size_t i = begin; i < begin + length; ++i) unicode::append_utf8(word, t.cps[i]);
    words.push_back(std::move(word));
    begin += length;
  }
  return words;
}

}  // namespace nvhcq::llm
