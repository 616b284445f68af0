#include "llm/tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "base/log.h"
#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/spm_encoder.h"

namespace nvhcq::llm {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Texts of end-of-turn tokens, for files that do not name them (llama.cpp's list),
// most specific first.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>",   "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>", "<EOT>", "_<EOT>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
};
constexpr std::string_view kEomText = "<|eom_id|>";

bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  size_t pos = 0;
  while (true) {
    const size_t at = text.find(from, pos);
    if (at == std::string_view::npos) break;
    out.append(text.substr(pos, at - pos));
    out.append(to);
    pos = at + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// Hugging Face's clean_up_tokenization_spaces, in llama.cpp's three passes.
std::string clean_up_spaces(const std::string& in) {
  // " ?", " !", " .", " ," lose their space.
  std::string a;
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (i > 0 && in[i - 1] == ' ' && (c == '?' || c == '!' || c == '.' || c == ',')) a.pop_back();
    a += c;
  }
  // " ' " becomes "'".
  std::string b;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == '\'' && i > 0 && i + 1 < a.size() && a[i - 1] == ' ' && a[i + 1] == ' ') {
      b.pop_back();
      b += '\'';
      ++i;  // the space after it goes too
      continue;
    }
    b += a[i];
  }
  // " 's", " 'm", " 're", " 've" lose their space (" 't", " 'd", " 'll" keep it).
  std::string c;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] == '\'' && i > 0 && b[i - 1] == ' ' && i + 1 < b.size()) {
      const char x1 = b[i + 1];
      const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
      if (x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) {
        c.pop_back();
      }
    }
    c += b[i];
  }
  return c;
}

// The byte a "<0xNN>" token stands for.
std::optional<uint8_t> parse_byte_token(const std::string& text) {
  if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return std::nullopt;
  auto hex = [](char h) -> int {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    return -1;
  };
  const int hi = hex(text[3]), lo = hex(text[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<uint8_t>(hi * 16 + lo);
}

}  // namespace

Tokenizer Tokenizer::from_metadata(const GgufMetadata& metadata) {
  Tokenizer t;
  const std::string& model = metadata.get_string("tokenizer.ggml.model");
  if (model == "llama") {
    t.model_ = TokenizerModel::kSentencePiece;
    t.add_space_prefix_ = true;
    t.add_bos_ = true;
    t.clean_spaces_ = false;
    t.bos_ = 1, t.eos_ = 2, t.unk_ = 0;
  } else if (model == "gpt2") {
    t.model_ = TokenizerModel::kBytePairBpe;
    const std::optional<std::string> pre_name = metadata.find_string("tokenizer.ggml.pre");
    std::optional<PreTokenizerSettings> pre = pre_tokenizer_from_name(pre_name.value_or("default"));
    if (!pre) {
      throw FormatError("tokenizer.ggml.pre '" + *pre_name +
                        "' names a pre-tokenizer nvhcq does not know");
    }
    if (!pre_name) log::warn("tokenizer.ggml.pre is missing: using the default pre-tokenizer");
    t.pre_ = pre->kind;
    t.ignore_merges_ = pre->ignore_merges;
    t.add_bos_ = pre->add_bos;
    t.clean_spaces_ = pre->clean_spaces;
    t.bos_ = pre->has_bos ? 11 : kNoToken;
    t.eos_ = 11;
    t.merges_ = BpeMerges::from_strings(metadata.get_string_array("tokenizer.ggml.merges"));
  } else {
    throw FormatError("tokenizer.ggml.model '" + model +
                      "' is not supported (nvhcq reads 'llama' and 'gpt2' tokenizers)");
  }
  if (auto v = metadata.find_bool("tokenizer.ggml.add_space_prefix")) t.add_space_prefix_ = *v;
  t.vocab_ = TokenVocab::from_metadata(metadata);
  t.load_special_tokens(metadata);
  return t;
}

void Tokenizer::load_special_tokens(const GgufMetadata& metadata) {
  struct IdKey {
    std::string_view key;
    int32_t* id;
  };
  const IdKey keys[] = {
      {"tokenizer.ggml.bos_token_id", &bos_},     {"tokenizer.ggml.eos_token_id", &eos_},
      {"tokenizer.ggml.eot_token_id", &eot_},     {"tokenizer.ggml.eom_token_id", &eom_},
      {"tokenizer.ggml.unknown_token_id", &unk_}, {"tokenizer.ggml.padding_token_id", &pad_},
  };
  for (const IdKey& k : keys) {
    if (!vocab_.valid(*k.id)) *k.id = kNoToken;  // a default beyond a small vocabulary
    const std::optional<int64_t> id = metadata.find_as<int64_t>(k.key);
    if (!id) continue;
    if (*id < 0 || *id >= static_cast<int64_t>(vocab_.size())) {
      log::warn(k.key, " = ", *id, " is outside the vocabulary of ", vocab_.size(), " tokens; ignored");
      continue;
    }
    *k.id = static_cast<int32_t>(*id);
  }
  if (auto v = metadata.find_bool("tokenizer.ggml.add_bos_token")) add_bos_ = *v;
  if (auto v = metadata.find_bool("tokenizer.ggml.add_eos_token")) add_eos_ = *v;
  if (add_bos_ && bos_ == kNoToken) {
    throw FormatError("tokenizer.ggml.add_bos_token is true but the model has no BOS token");
  }
  if (add_eos_ && eos_ == kNoToken) {
    throw FormatError("tokenizer.ggml.add_eos_token is true but the model has no EOS token");
  }

  // End-of-turn tokens, found by text when the file does not name them (the first
  // text of the list present is the EOT token); they are control tokens even where
  // a converter forgot to mark them so.
  for (std::string_view text : kEotTexts) {
    const int32_t id = vocab_.find(text);
    if (id == kNoToken) continue;
    if (eot_ == kNoToken) eot_ = id;
    eog_.insert(id);
    vocab_.add_attr(id, kAttrControl);
  }
  if (const int32_t id = vocab_.find(kEomText); id != kNoToken) {
    if (eom_ == kNoToken) eom_ = id;
    eog_.insert(id);
    vocab_.add_attr(id, kAttrControl);
  }
  for (int32_t id : {eos_, eot_, eom_}) {
    if (id != kNoToken) eog_.insert(id);
  }

  // Tokens recognised in text, longest first so that "<|end|>" wins over "<|e".
  for (int32_t id = 0; id < static_cast<int32_t>(vocab_.size()); ++id) {
    if (vocab_.attr(id) & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      special_tokens_.push_back(id);
    }
  }
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(), [&](int32_t a, int32_t b) {
    return vocab_.text(a).size() > vocab_.text(b).size();
  });
  special_rank_.assign(vocab_.size(), 0);
  for (size_t i = 0; i < special_tokens_.size(); ++i) {
    special_rank_[static_cast<size_t>(special_tokens_[i])] = static_cast<uint32_t>(i);
    special_index_.add(vocab_.text(special_tokens_[i]), special_tokens_[i]);
  }

  // Phi-3's special tokens swallow the whitespace after them (llama.cpp's rule,
  // keyed on the model name).
  std::string name = metadata.find_string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (int32_t id : special_tokens_) vocab_.add_attr(id, kAttrRstrip);
    if (int32_t id = vocab_.find("</s>"); id != kNoToken) vocab_.add_attr(id, kAttrRstrip);
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (int32_t id = vocab_.find(text); id != kNoToken) vocab_.clear_attr(id, kAttrRstrip);
    }
  }
}

std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text,
                                                          bool parse_special) const {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({kNoToken, 0, text.size()});
  // Only tokens that occur in the text can split it; visit them in the fixed
  // longest-first order, which decides between overlapping matches.
  std::vector<int32_t> candidates = special_index_.occurring_in(text);
  std::sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
    return special_rank_[static_cast<size_t>(a)] < special_rank_[static_cast<size_t>(b)];
  });

  for (int32_t id : candidates) {
    const uint32_t attr = vocab_.attr(id);
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown))) continue;
    const std::string& special = vocab_.text(id);
    std::vector<Fragment> next;
    next.reserve(fragments.size() + 2);
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        next.push_back(f);
        continue;
      }
      size_t begin = f.begin;
      while (begin < f.end) {
        const size_t at = text.substr(0, f.end).find(special, begin);
        if (at == std::string_view::npos) {
          next.push_back({kNoToken, begin, f.end});
          break;
        }
        size_t left_end = at;
        if (attr & kAttrLstrip) {
          while (left_end > begin && ascii_space(text[left_end - 1])) --left_end;
        }
        if (left_end > begin) next.push_back({kNoToken, begin, left_end});
        next.push_back({id, at, at + special.size()});
        begin = at + special.size();
        if (attr & kAttrRstrip) {
          while (begin < f.end && ascii_space(text[begin])) ++begin;
        }
      }
    }
    fragments = std::move(next);
  }
  return fragments;
}

void Tokenizer::encode_text(std::string_view text, bool after_special,
                            std::vector<int32_t>& out) const {
  if (model_ == TokenizerModel::kSentencePiece) {
    // SentencePiece sees spaces as U+2581 and every text as starting with one.
    std::string prefixed = (add_space_prefix_ && after_special) ? " " : "";
    prefixed.append(text);
    spm_encode(vocab_, replace_all(prefixed, " ", kSpaceMark), unk_, out);
    return;
  }
  for (const std::string& word : pre_tokenize(*pre_, text)) {
    bpe_encode_word(vocab_, merges_, byte_level_encode(word), ignore_merges_, out);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  // The merge loops index bytes with 32 bits.
  if (text.size() > (size_t{1} << 31)) {
    throw UsageError("cannot tokenize " + std::to_string(text.size()) +
                     " bytes at once (2 GiB at most)");
  }
  std::vector<int32_t> out;
  if (add_special && add_bos_) out.push_back(bos_);
  bool after_special = true;  // the text's start counts as following a special token
  for (const Fragment& f : split_special(text, parse_special)) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
      after_special = true;
    } else {
      encode_text(text.substr(f.begin, f.end - f.begin), after_special, out);
      after_special = false;
    }
  }
  if (add_special && add_eos_) out.push_back(eos_);
  return out;
}

int32_t Tokenizer::checked(int32_t id) const {
  if (!vocab_.valid(id)) {
    throw UsageError("token id " + std::to_string(id) + " is outside the vocabulary of " +
                     std::to_string(vocab_.size()) + " tokens");
  }
  return id;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  const uint32_t attr = vocab_.attr(checked(id));
  const std::string& text = vocab_.text(id);
  if (attr & (kAttrControl | kAttrUnknown)) return render_special ? text : std::string();
  if (attr & kAttrUserDefined) return text;
  if (attr & kAttrNormal) {
    if (model_ == TokenizerModel::kSentencePiece) return replace_all(text, kSpaceMark, " ");
    return byte_level_decode(text);
  }
  if (attr & kAttrByte) {
    if (auto b = parse_byte_token(text)) return std::string(1, static_cast<char>(*b));
    return text;
  }
  return {};  // unused or undefined tokens have no text
}

std::string Tokenizer::decode(std::span<const int32_t> ids, const DecodeOptions& options) const {
  std::string out;
  bool strip_space = add_space_prefix_;
  for (int32_t id : ids) {
    std::string piece = token_to_piece(id, options.render_special);
    if (strip_space && !piece.empty()) {
      // The space SentencePiece put before the text is not part of it.
      if (piece[0] == ' ') piece.erase(0, 1);
      strip_space = false;
    }
    out += piece;
  }
  if (options.clean_up_spaces && clean_spaces_) out = clean_up_spaces(out);
  return out;
}

}  // namespace nvhcq::llm
