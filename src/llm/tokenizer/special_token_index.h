#pragma once
// Finds which special tokens occur anywhere in a text, in one pass over it: a trie
// of their texts walked from every position. The tokenizer then splits the text
// on those tokens only, instead of searching the whole text for each of the
// thousands of added tokens some vocabularies have.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvhcq::llm {

class SpecialTokenIndex {
 public:
  void add(std::string_view text, int32_t id);
  // Ids of the added tokens that occur in `text` (each once, in no particular order).
  std::vector<int32_t> occurring_in(std::string_view text) const;

 private:
  int32_t child(int32_t node, uint8_t byte) const {
    auto it = edges_.find(key(node, byte));
    return it == edges_.end() ? -1 : it->second;
  }
  static uint64_t key(int32_t node, uint8_t byte) {
    return (static_cast<uint64_t>(node) << 8) | byte;
  }

  std::unordered_map<uint64_t, int32_t> edges_;  // (node, byte) -> node
  std::vector<int32_t> token_at_;                // node -> token id ending there, or -1
  bool first_byte_[256] = {};                     // bytes some token starts with
};

}  // namespace nvhcq::llm
