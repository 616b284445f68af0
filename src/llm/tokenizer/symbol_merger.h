#pragma once
// The merge loop SentencePiece (SPM) and BPE share: text starts as one symbol per
// UTF-8 character; the best-rated pair of neighbours is merged, again and again,
// until no pair is rated. A higher rating merges first; equal ratings merge the
// leftmost pair first. Candidates whose symbols changed since they were rated
// are skipped when they come up, so each merge costs O(log n).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "llm/tokenizer/unicode.h"

namespace nvhcq::llm {

struct MergeSymbol {
  uint32_t begin = 0;  // byte offset in the text
  uint32_t size = 0;   // bytes; 0 once merged into its left neighbour
  int32_t prev = -1, next = -1;
};

// One symbol per UTF-8 character of `text` (a truncated final sequence is one
// symbol of the bytes left), linked in order.
inline std::vector<MergeSymbol> split_characters(std::string_view text) {
  std::vector<MergeSymbol> symbols;
  symbols.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t n = std::min(unicode::utf8_length(static_cast<uint8_t>(text[pos])), text.size() - pos);
    MergeSymbol s;
    s.begin = static_cast<uint32_t>(pos);
    s.size = static_cast<uint32_t>(n);
    s.prev = static_cast<int32_t>(symbols.size()) - 1;
    pos += n;
    s.next = pos == text.size() ? -1 : static_cast<int32_t>(symbols.size()) + 1;
    symbols.push_back(s);
  }
  return symbols;
}

// Runs the merge loop. rate(left_text, right_text) returns the pair's rating, or
// nullopt when the pair may not merge. Returns the symbols (merged ones have size 0;
// follow next from index 0 for the survivors in order).
template <typename Rate>
std::vector<MergeSymbol> merge_symbols(std::string_view text, std::vector<MergeSymbol> symbols,
                                       Rate&& rate) {
  struct Candidate {
    double rating;
    int32_t left, right;
    uint32_t size;  // both symbols' bytes when rated: any change makes it stale
  };
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.rating < b.rating || (a.rating == b.rating && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const MergeSymbol& l = symbols[static_cast<size_t>(left)];
    const MergeSymbol& r = symbols[static_cast<size_t>(right)];
    std::optional<double> rating =
        rate(text.substr(l.begin, l.size), text.substr(r.begin, r.size));
    if (rating) queue.push({*rating, left, right, l.size + r.size});
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    consider(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  }
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    MergeSymbol& l = symbols[static_cast<size_t>(c.left)];
    MergeSymbol& r = symbols[static_cast<size_t>(c.right)];
    if (l.size == 0 || r.size == 0 || l.size + r.size != c.size) continue;  // stale
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = c.left;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  return symbols;
}

}  // namespace nvhcq::llm
