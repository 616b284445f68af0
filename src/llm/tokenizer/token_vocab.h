#pragma once
// The token list of a model: text, score and attributes per id, and the reverse
// lookup from text to id. Read from tokenizer.ggml.tokens, .scores and .token_type.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llm/gguf/gguf_metadata.h"

namespace nvhcq::llm {

inline constexpr int32_t kNoToken = -1;

// Token attributes (llama.cpp's, so behaviour carries over).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1 << 0,
  kAttrUnused = 1 << 1,
  kAttrNormal = 1 << 2,
  kAttrControl = 1 << 3,      // <s>, </s>, <|eot_id|>: matched in text only when asked
  kAttrUserDefined = 1 << 4,  // added tokens: always matched in text
  kAttrByte = 1 << 5,         // <0x0A>: one raw byte
  kAttrLstrip = 1 << 7,       // eats whitespace before it when matched in text
  kAttrRstrip = 1 << 8,       // eats whitespace after it
};

// GGUF's tokenizer.ggml.token_type values.
enum class GgufTokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

class TokenVocab {
 public:
  // Reads the token list; throws FormatError for a missing or malformed list, a
  // scores or types array shorter than the list, or a duplicate token text.
  static TokenVocab from_metadata(const GgufMetadata& metadata);

  size_t size() const { return texts_.size(); }
  bool valid(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < texts_.size(); }
  const std::string& text(int32_t id) const { return texts_[static_cast<size_t>(id)]; }
  float score(int32_t id) const { return scores_[static_cast<size_t>(id)]; }
  uint32_t attr(int32_t id) const { return attrs_[static_cast<size_t>(id)]; }
  void add_attr(int32_t id, uint32_t attr) { attrs_[static_cast<size_t>(id)] |= attr; }
  void clear_attr(int32_t id, uint32_t attr) { attrs_[static_cast<size_t>(id)] &= ~attr; }

  // The id of a token text, or kNoToken.
  int32_t find(std::string_view text) const {
    auto it = ids_.find(text);
    return it == ids_.end() ? kNoToken : it->second;
  }
  // SentencePiece byte fallback: the <0xNN> token of a byte, else a token whose text
  // is that single byte, else kNoToken.
  int32_t byte_token(uint8_t byte) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  std::vector<std::string> texts_;
  std::vector<float> scores_;
  std::vector<uint32_t> attrs_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
};

}  // namespace nvhcq::llm
