#pragma once
// SentencePiece-style encoding (tokenizer.ggml.model "llama": LLaMA 1/2, Phi-3,
// Mistral v0.1...): starting from single characters, the pair whose concatenation is
// the vocabulary token with the highest score merges first. A piece that is not a
// token at the end falls back to its bytes (<0xNN> tokens).
// The caller has already replaced spaces by U+2581 and added the leading one.

#include <cstdint>
#include <string_view>
#include <vector>

#include "llm/tokenizer/token_vocab.h"

namespace nvhcq::llm {

// Appends the tokens of `text` to `out`. `unknown` is used for a byte with no
// byte token (kNoToken: such bytes are dropped).
void spm_encode(const TokenVocab& vocab, std::string_view text, int32_t unknown,
                std::vector<int32_t>& out);

}  // namespace nvhcq::llm
