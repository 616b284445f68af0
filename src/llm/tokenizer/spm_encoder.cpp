#include "llm/tokenizer/spm_encoder.h"

#include <cmath>
#include <optional>
#include <string>

#include "llm/tokenizer/symbol_merger.h"

namespace nvhcq::llm {

void spm_encode(const TokenVocab& vocab, std::string_view text, int32_t unknown,
                std::vector<int32_t>& out) {
  if (text.empty()) return;
  std::string joined;
  auto rate = [&](std::string_view left, std::string_view right) -> std::optional<double> {
    joined.assign(left);
    joined.append(right);
    const int32_t id = vocab.find(joined);
    if (id == kNoToken) return std::nullopt;
    const float score = vocab.score(id);
    // A NaN score (a broken file) must not break the queue's ordering.
    return std::isnan(score) ? -INFINITY : static_cast<double>(score);
  };
  const std::vector<MergeSymbol> symbols = merge_symbols(text, split_characters(text), rate);
  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const MergeSymbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.begin, s.size);
    const int32_t id = vocab.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    // Not a token: byte fallback.
    for (unsigned char b : piece) {
      const int32_t byte_id = vocab.byte_token(b);
      if (byte_id != kNoToken) {
        out.push_back(byte_id);
      } else if (unknown != kNoToken) {
        out.push_back(unknown);
      }
    }
  }
}

}  // namespace nvhcq::llm
