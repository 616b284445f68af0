#include "llm/tokenizer/token_vocab.h"

#include <limits>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";

uint32_t attr_of_type(int32_t type) {
  switch (static_cast<GgufTokenType>(type)) {
    case GgufTokenType::kNormal: return kAttrNormal;
    case GgufTokenType::kUnknown: return kAttrUnknown;
    case GgufTokenType::kControl: return kAttrControl;
    case GgufTokenType::kUserDefined: return kAttrUserDefined;
    case GgufTokenType::kUnused: return kAttrUnused;
    case GgufTokenType::kByte: return kAttrByte;
    default: return kAttrUndefined;
  }
}

}  // namespace

TokenVocab TokenVocab::from_metadata(const GgufMetadata& metadata) {
  TokenVocab v;
  v.texts_ = metadata.get_string_array(kTokensKey);
  const size_t n = v.texts_.size();
  if (n == 0) throw FormatError(std::string(kTokensKey) + " is empty");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw FormatError(std::string(kTokensKey) + " has more tokens than int32 ids can number");
  }

  v.scores_.assign(n, 0.0f);
  if (const GgufValue* scores = metadata.find(kScoresKey)) {
    // Converters write f32 scores; llama.cpp also accepts i32.
    std::vector<float> s;
    if (scores->is_array() && scores->element_type() == GgufType::I32) {
      for (int32_t x : scores->as_array<int32_t>(kScoresKey)) s.push_back(static_cast<float>(x));
    } else {
      s = scores->as_array<float>(kScoresKey);
    }
    if (s.size() < n) {
      throw FormatError(std::string(kScoresKey) + " has " + std::to_string(s.size()) +
                        " entries for " + std::to_string(n) + " tokens");
    }
    std::copy(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n), v.scores_.begin());
  }

  v.attrs_.assign(n, kAttrNormal);
  if (metadata.contains(kTypesKey)) {
    const std::vector<int32_t> types = metadata.get_array<int32_t>(kTypesKey);
    if (types.size() < n) {
      throw FormatError(std::string(kTypesKey) + " has " + std::to_string(types.size()) +
                        " entries for " + std::to_string(n) + " tokens");
    }
    for (size_t i = 0; i < n; ++i) v.attrs_[i] = attr_of_type(types[i]);
  }

  v.ids_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string& text = v.texts_[i];
    // An empty token would match everywhere; llama.cpp renames it the same way.
    if (text.empty()) text = "[EMPTY_" + std::to_string(i) + "]";
    auto [it, inserted] = v.ids_.emplace(text, static_cast<int32_t>(i));
    if (!inserted) {
      throw FormatError("duplicate token in " + std::string(kTokensKey) + ": ids " +
                        std::to_string(it->second) + " and " + std::to_string(i) +
                        " have the same text");
    }
  }
  return v;
}

int32_t TokenVocab::byte_token(uint8_t byte) const {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const char name[6] = {'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
  const int32_t id = find(std::string_view(name, 6));
  if (id != kNoToken) return id;
  const char single = static_cast<char>(byte);
  return find(std::string_view(&single, 1));
}

}  // namespace nvhcq::llm
