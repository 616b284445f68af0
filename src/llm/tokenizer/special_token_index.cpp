#include "llm/tokenizer/special_token_index.h"

namespace nvhcq::llm {

void SpecialTokenIndex::add(std::string_view text, int32_t id) {
  if (text.empty()) return;
  if (token_at_.empty()) token_at_.push_back(-1);  // the root
  int32_t node = 0;
  for (unsigned char c : text) {
    int32_t next = child(node, c);
    if (next < 0) {
      next = static_cast<int32_t>(token_at_.size());
      token_at_.push_back(-1);
      edges_.emplace(key(node, c), next);
    }
    node = next;
  }
  token_at_[static_cast<size_t>(node)] = id;
  first_byte_[static_cast<unsigned char>(text[0])] = true;
}

std::vector<int32_t> SpecialTokenIndex::occurring_in(std::string_view text) const {
  std::vector<int32_t> found;
  if (token_at_.empty()) return found;
  std::vector<bool> seen(token_at_.size(), false);
  for (size_t start = 0; start < text.size(); ++start) {
    if (!first_byte_[static_cast<unsigned char>(text[start])]) continue;
    int32_t node = 0;
    for (size_t i = start; i < text.size(); ++i) {
      node = child(node, static_cast<unsigned char>(text[i]));
      if (node < 0) break;
      const int32_t id = token_at_[static_cast<size_t>(node)];
      if (id >= 0 && !seen[static_cast<size_t>(node)]) {
        seen[static_cast<size_t>(node)] = true;
        found.push_back(id);
      }
    }
  }
  return found;
}

}  // namespace nvhcq::llm
