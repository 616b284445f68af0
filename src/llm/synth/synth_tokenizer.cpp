#include "llm/synth/synth_tokenizer.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_set>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/tokenizer.h"

namespace nvhcq::llm {
namespace {

// The text the built-in merges are learned from: plain English about the things a
// test prompt is likely to mention, so common words become single tokens.
constexpr std::string_view kCorpus =
    "Once upon a time there was a small model that lived inside a computer. Every day it "
    "read the words that people gave it and tried to guess the next one. It was not very "
    "good at this, because its weights were chosen at random, but it worked hard and it "
    "was fast. The model liked numbers like 1, 2, 3, 10, 42 and 2048, and it liked the "
    "colors of the sky: blue in the morning, red in the evening and black at night. "
    "People asked it questions. What is the capital of France? How do you make bread? "
    "Why is the sea blue? Where do the birds go in the winter? It answered with whatever "
    "came to its mind, and the people laughed, because the answers made no sense at all. "
    "But the engineers who built it were happy: the model produced the same words for the "
    "same seed, it used every thread of the machine, and it never ran out of memory. They "
    "measured how many tokens it could write in one second, wrote the number down, and "
    "then they made it faster. This is the story of that model, and of the people who "
    "wanted it to be better than all the others. The end.\n";

constexpr std::string_view kSpecialTokens[] = {
    "<|begin_of_text|>",   "<|end_of_text|>",   "<|eot_id|>",
    "<|start_header_id|>", "<|end_header_id|>",
};
constexpr int32_t kTypeNormal = 1, kTypeControl = 3, kTypeUnused = 5, kTypeByte = 6;

// Splits byte-level text into its code points (each one symbol to start with).
std::vector<std::string> code_points(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    out.push_back(text.substr(i, len));
    i += len;
  }
  return out;
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<std::string> merges;
  std::unordered_set<std::string> known;

  bool add(std::string text) {
    if (!known.insert(text).second) return false;
    tokens.push_back(std::move(text));
    return true;
  }
};

// Classic BPE training: repeatedly merge the most frequent adjacent pair (ties to
// the smallest pair, so the result never depends on hash order).
void learn_merges(Vocab& v, size_t budget) {
  std::map<std::vector<std::string>, int> words;
  for (const std::string& w : pre_tokenize(PreTokenizer::kLlama3, kCorpus)) {
    ++words[code_points(byte_level_encode(w))];
  }
  std::vector<std::pair<std::vector<std::string>, int>> list(words.begin(), words.end());
  while (v.tokens.size() < budget) {
    std::map<std::pair<std::string, std::string>, int> pairs;
    for (const auto& [symbols, count] : list) {
      for (size_t i = 0; i + 1 < symbols.size(); ++i) pairs[{symbols[i], symbols[i + 1]}] += count;
    }
    const std::pair<std::string, std::string>* best = nullptr;
    int best_count = 1;  // a pair seen once teaches nothing
    for (const auto& [pair, count] : pairs) {
      if (count > best_count) best = &pair, best_count = count;
    }
    if (best == nullptr) break;
    const std::string left = best->first, right = best->second, joined = left + right;
    v.merges.push_back(left + " " + right);
    v.add(joined);
    for (auto& [symbols, count] : list) {
      std::vector<std::string> merged;
      for (size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
          merged.push_back(joined);
          ++i;
        } else {
          merged.push_back(symbols[i]);
        }
      }
      symbols = std::move(merged);
    }
  }
}

bool is_word_token(const std::string& t) {
  static const std::string kSpace = byte_level_encode(" ");  // "Ġ"
  std::string_view s = t;
  if (s.starts_with(kSpace)) s.remove_prefix(kSpace.size());
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// Fills the vocabulary with letter sequences: every word-like token followed by
// every letter, breadth first, each a merge of the token and the letter.
void fill_with_words(Vocab& v, size_t target) {
  std::deque<std::string> queue;
  for (const std::string& t : v.tokens) {
    if (is_word_token(t)) queue.push_back(t);
  }
  while (v.tokens.size() < target && !queue.empty()) {
    const std::string base = queue.front();
    queue.pop_front();
    for (char c = 'a'; c <= 'z' && v.tokens.size() < target; ++c) {
      const std::string joined = base + c;
      if (!v.add(joined)) continue;
      v.merges.push_back(base + " " + std::string(1, c));
      queue.push_back(joined);
    }
  }
}

}  // namespace

SynthTokenizer builtin_synth_tokenizer(uint32_t n_vocab) {
  const size_t n_special = std::size(kSpecialTokens);
  if (n_vocab < 300) {
    throw UsageError("the built-in tokenizer needs a vocabulary of at least 300 tokens");
  }
  const size_t n_normal = n_vocab - n_special;
  Vocab v;
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    v.add(byte_level_encode(std::string_view(&byte, 1)));
  }
  learn_merges(v, n_normal);
  fill_with_words(v, n_normal);
  if (v.tokens.size() != n_normal) throw Error("built-in tokenizer: could not fill the vocabulary");

  std::vector<int32_t> types(v.tokens.size(), kTypeNormal);
  for (std::string_view s : kSpecialTokens) {
    v.tokens.emplace_back(s);
    types.push_back(kTypeControl);
  }
  SynthTokenizer t;
  t.n_tokens = t.n_real_tokens = n_vocab;
  t.quiet.assign(n_vocab, false);
  for (int b = 0; b < 256; ++b) t.quiet[static_cast<size_t>(b)] = b < 0x20 || b >= 0x7f;
  for (size_t i = n_normal; i < n_vocab; ++i) t.quiet[i] = true;
  GgufMetadata& m = t.metadata;
  m.set_string("tokenizer.ggml.model", "gpt2");
  m.set_string("tokenizer.ggml.pre", "llama-bpe");
  m.set("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
  m.set("tokenizer.ggml.token_type", GgufValue::array(types));
  m.set("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
  m.set_scalar("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(n_normal));
  m.set_scalar("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(n_normal + 1));
  m.set_scalar("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(n_normal + 2));
  m.set_scalar("tokenizer.ggml.add_bos_token", true);
  return t;
}

SynthTokenizer vocab_file_tokenizer(const std::string& vocab_file, uint32_t n_vocab) {
  const GgufFile file = GgufFile::open(vocab_file);
  if (!file.metadata().contains("tokenizer.ggml.tokens")) {
    throw FormatError(vocab_file + " holds no tokenizer (no tokenizer.ggml.tokens)");
  }
  SynthTokenizer t;
  for (const auto& [key, value] : file.metadata().entries()) {
    if (key.starts_with("tokenizer.")) t.metadata.set(key, value);
  }
  std::vector<std::string> tokens = t.metadata.get_string_array("tokenizer.ggml.tokens");
  t.n_real_tokens = static_cast<uint32_t>(tokens.size());
  if (tokens.size() < n_vocab) {
    std::unordered_set<std::string> known(tokens.begin(), tokens.end());
    const size_t first_pad = tokens.size();
    for (size_t i = first_pad; i < n_vocab; ++i) {
      std::string pad = "[PAD" + std::to_string(i) + "]";
      while (!known.insert(pad).second) pad += "_";
      tokens.push_back(std::move(pad));
    }
    if (t.metadata.contains("tokenizer.ggml.token_type")) {
      std::vector<int32_t> types = t.metadata.get_i32_array("tokenizer.ggml.token_type");
      types.resize(first_pad);
      types.resize(n_vocab, kTypeUnused);
      t.metadata.set("tokenizer.ggml.token_type", GgufValue::array(types));
    }
    if (t.metadata.contains("tokenizer.ggml.scores")) {
      std::vector<float> scores = t.metadata.get_f32_array("tokenizer.ggml.scores");
      scores.resize(first_pad);
      scores.resize(n_vocab, -1000.0f);
      t.metadata.set("tokenizer.ggml.scores", GgufValue::array(scores));
    }
    t.metadata.set("tokenizer.ggml.tokens", GgufValue::string_array(tokens));
  }
  t.n_tokens = static_cast<uint32_t>(tokens.size());
  t.quiet.assign(t.n_tokens, false);
  for (size_t i = t.n_real_tokens; i < t.n_tokens; ++i) t.quiet[i] = true;
  if (t.metadata.contains("tokenizer.ggml.token_type")) {
    const std::vector<int32_t> types = t.metadata.get_i32_array("tokenizer.ggml.token_type");
    for (size_t i = 0; i < t.n_tokens && i < types.size(); ++i) {
      if (types[i] == kTypeControl || types[i] == kTypeUnused || types[i] == kTypeByte) {
        t.quiet[i] = true;  // a lone byte token is often half a character
      }
    }
  }
  // Fail now, not when the model is first run, if nvhcq cannot use this tokenizer.
  (void)Tokenizer::from_metadata(t.metadata);
  return t;
}

}  // namespace nvhcq::llm
