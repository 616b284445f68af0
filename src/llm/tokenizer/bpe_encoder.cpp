#include "llm/tokenizer/bpe_encoder.h"

#include <functional>
#include <optional>

#include "llm/tokenizer/symbol_merger.h"

namespace nvhcq::llm {

size_t BpeMerges::Hash::operator()(const KeyView& k) const {
  const size_t a = std::hash<std::string_view>{}(k.left);
  const size_t b = std::hash<std::string_view>{}(k.right);
  return a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
}

BpeMerges BpeMerges::from_strings(const std::vector<std::string>& merges) {
  BpeMerges m;
  m.ranks_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& s = merges[i];
    // Split at the first space after the first character, as llama.cpp does (a
    // merge may start with a space in non-byte-level vocabularies).
    const size_t space = s.size() > 1 ? s.find(' ', 1) : std::string::npos;
    if (space == std::string::npos) continue;  // malformed: can never match a pair
    m.ranks_.try_emplace(Key{s.substr(0, space), s.substr(space + 1)}, static_cast<int32_t>(i));
  }
  return m;
}

int32_t BpeMerges::rank(std::string_view left, std::string_view right) const {
  auto it = ranks_.find(KeyView{left, right});
  return it == ranks_.end() ? -1 : it->second;
}

void bpe_encode_word(const TokenVocab& vocab, const BpeMerges& merges, std::string_view word,
                     bool ignore_merges, std::vector<int32_t>& out) {
  if (word.empty()) return;
  if (ignore_merges) {
    const int32_t id = vocab.find(word);
    if (id != kNoToken) {
      out.push_back(id);
      return;
    }
  }
  auto rate = [&](std::string_view left, std::string_view right) -> std::optional<double> {
    const int32_t r = merges.rank(left, right);
    if (r < 0) return std::nullopt;
    return -static_cast<double>(r);  // lower rank merges first
  };
  const std::vector<MergeSymbol> symbols = merge_symbols(word, split_characters(word), rate);
  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const MergeSymbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = word.substr(s.begin, s.size);
    const int32_t id = vocab.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_id = vocab.find(std::string_view(&c, 1));
      if (byte_id != kNoToken) out.push_back(byte_id);
    }
  }
}

}  // namespace nvhcq::llm
