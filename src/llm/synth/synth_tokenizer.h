#pragma once
// Tokenizers for synthetic models.
//
// Without a vocab file, `nvhcq synth` gives its model a byte-level BPE tokenizer of
// its own (tokenizer.ggml.model "gpt2", llama-3 pre-tokenizer): the 256 byte
// tokens, merges learned from a short built-in English text, then merges of
// letter sequences until the vocabulary has the size asked for, and LLaMA-3's
// special tokens last. Every token is printable text, so a random model's output
// reads as (nonsense) words rather than blanks.
//
// With a vocab file (a GGUF holding tokenizer.* keys, such as the vocab-only files
// of llama.cpp's tests), its tokenizer is copied and padded to the model's size
// with unused "[PADn]" tokens, as llama.cpp's converter pads.

#include <cstdint>
#include <string>
#include <vector>

#include "llm/gguf/gguf_metadata.h"

namespace nvhcq::llm {

struct SynthTokenizer {
  GgufMetadata metadata;       // the tokenizer.* keys
  uint32_t n_tokens = 0;       // tokens in the list (the model's vocabulary)
  uint32_t n_real_tokens = 0;  // tokens before any padding
  // Per token: true for tokens a random model should rarely produce — padding,
  // control tokens (so generation does not end at once) and bytes that are not
  // printable ASCII (so output stays readable: a lone byte is often half a character).
  std::vector<bool> quiet;
};

// The built-in tokenizer with exactly `n_vocab` tokens (n_vocab >= 300).
SynthTokenizer builtin_synth_tokenizer(uint32_t n_vocab);

// The tokenizer of `vocab_file`, padded to `n_vocab` tokens when it has fewer
// (a larger vocabulary is kept whole: n_tokens then exceeds n_vocab). FormatError
// when the file has no tokenizer.
SynthTokenizer vocab_file_tokenizer(const std::string& vocab_file, uint32_t n_vocab);

}  // namespace nvhcq::llm
