#pragma once
// Byte-level BPE encoding (tokenizer.ggml.model "gpt2": GPT-2, LLaMA 3, Qwen2,
// DeepSeek, Falcon, StarCoder...): a word (already byte-level encoded) starts as
// single characters, and the pair with the best (lowest) rank in the merge list
// merges first, leftmost first among equals.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llm/tokenizer/token_vocab.h"

namespace nvhcq::llm {

class BpeMerges {
 public:
  // Merges are "left right" strings, best first; a repeated pair keeps its first rank.
  static BpeMerges from_strings(const std::vector<std::string>& merges);

  // The rank of merging left+right, or -1.
  int32_t rank(std::string_view left, std::string_view right) const;
  size_t size() const { return ranks_.size(); }

 private:
  struct Key {
    std::string left, right;
  };
  struct KeyView {
    std::string_view left, right;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(const KeyView& k) const;
    size_t operator()(const Key& k) const { return (*this)(KeyView{k.left, k.right}); }
  };
  struct Equal {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::string_view(a.left) == std::string_view(b.left) &&
             std::string_view(a.right) == std::string_view(b.right);
    }
  };
  std::unordered_map<Key, int32_t, Hash, Equal> ranks_;
};

// Appends the tokens of one byte-level encoded word. With `ignore_merges`, a word
// that is a token as a whole is that token (LLaMA 3). A final piece that is not a
// token falls back to the tokens of its single bytes, where there are any.
void bpe_encode_word(const TokenVocab& vocab, const BpeMerges& merges, std::string_view word,
                     bool ignore_merges, std::vector<int32_t>& out);

}  // namespace nvhcq::llm
