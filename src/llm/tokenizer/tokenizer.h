#pragma once
// A model's tokenizer, built from its GGUF metadata (tokenizer.ggml.*): text to
// token ids and back, exactly as llama.cpp (and the model's own tokenizer) does.
//
// Supported: tokenizer.ggml.model "llama" (SentencePiece-style, with byte
// fallback) and "gpt2" (byte-level BPE, with the pre-tokenizers of pre_tokenizer.h).
//
//   Tokenizer tok = Tokenizer::from_gguf(file);
//   std::vector<int32_t> ids = tok.encode("Hello", /*add_special=*/true, /*parse_special=*/false);
//   std::string text = tok.decode(ids);

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llm/gguf/gguf_file.h"
#include "llm/tokenizer/bpe_encoder.h"
#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/special_token_index.h"
#include "llm/tokenizer/token_vocab.h"

namespace nvhcq::llm {

enum class TokenizerModel {
  kSentencePiece,  // "llama"
  kBytePairBpe,    // "gpt2"
};

struct DecodeOptions {
  // Render control tokens (<s>, <|eot_id|>) as their text; otherwise they vanish.
  bool render_special = false;
  // Apply the model's clean-up of spaces before punctuation (" ," -> ","), as
  // Hugging Face's clean_up_tokenization_spaces does, when the model asks for it.
  // Off by default: then decode(encode(text)) gives back text.
  bool clean_up_spaces = false;
};

class Tokenizer {
 public:
  // Throws FormatError naming the key for missing or malformed tokenizer metadata,
  // and for tokenizer models or pre-tokenizers nvhcq does not support.
  static Tokenizer from_gguf(const GgufFile& file) { return from_metadata(file.metadata()); }
  static Tokenizer from_metadata(const GgufMetadata& metadata);

  // Text to token ids. add_special adds BOS/EOS as the model wants them
  // (tokenizer.ggml.add_bos_token / add_eos_token). parse_special turns control
  // tokens written in the text ("<|eot_id|>") into their ids; without it they are
  // tokenized as plain text. User-defined tokens are always recognised.
  std::vector<int32_t> encode(std::string_view text, bool add_special = true,
                              bool parse_special = false) const;

  // Token ids to text. Byte tokens are reassembled into UTF-8; the leading space
  // SentencePiece adds is removed.
  std::string decode(std::span<const int32_t> ids, const DecodeOptions& options = {}) const;
  // The text of one token (for streaming output); control tokens give "" unless
  // render_special. A token may be part of a UTF-8 sequence: concatenate pieces.
  std::string token_to_piece(int32_t id, bool render_special = false) const;

  size_t vocab_size() const { return vocab_.size(); }
  TokenizerModel model() const { return model_; }
  std::optional<PreTokenizer> pre_tokenizer() const { return pre_; }
  int32_t bos() const { return bos_; }  // kNoToken when the model has none
  int32_t eos() const { return eos_; }
  int32_t eot() const { return eot_; }
  int32_t unk() const { return unk_; }
  int32_t pad() const { return pad_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool clean_spaces() const { return clean_spaces_; }
  // End of generation: EOS, EOT (<|eot_id|>, <|im_end|>, <|end|>...) or EOM.
  bool is_eog(int32_t id) const { return eog_.count(id) > 0; }
  const std::set<int32_t>& eog_ids() const { return eog_; }
  bool is_control(int32_t id) const { return vocab_.valid(id) && (vocab_.attr(id) & kAttrControl); }

  const std::string& token_text(int32_t id) const { return vocab_.text(checked(id)); }
  float token_score(int32_t id) const { return vocab_.score(checked(id)); }
  uint32_t token_attr(int32_t id) const { return vocab_.attr(checked(id)); }
  int32_t find_token(std::string_view text) const { return vocab_.find(text); }

 private:
  // A piece of input text: raw text to tokenize, or a special token found in it.
  struct Fragment {
    int32_t token = kNoToken;  // kNoToken: raw text [begin, end)
    size_t begin = 0, end = 0;
  };

  Tokenizer() = default;
  void load_special_tokens(const GgufMetadata& metadata);
  std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const;
  int32_t checked(int32_t id) const;

  TokenVocab vocab_;
  TokenizerModel model_ = TokenizerModel::kSentencePiece;
  std::optional<PreTokenizer> pre_;
  BpeMerges merges_;
  bool ignore_merges_ = false;
  bool add_space_prefix_ = false;
  bool add_bos_ = false, add_eos_ = false;
  bool clean_spaces_ = false;
  int32_t bos_ = kNoToken, eos_ = kNoToken, eot_ = kNoToken, eom_ = kNoToken;
  int32_t unk_ = kNoToken, pad_ = kNoToken;
  std::set<int32_t> eog_;
  std::vector<int32_t> special_tokens_;  // longest text first: matched in that order
  std::vector<uint32_t> special_rank_;   // id -> position in special_tokens_
  SpecialTokenIndex special_index_;
};

}  // namespace nvhcq::llm
