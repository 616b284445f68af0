// Tokenizer behaviour beyond the llama.cpp vectors: special tokens in text, BOS/EOS,
// end-of-generation ids, detokenization of bytes and control tokens, and the
// clean-up of spaces, on the real vocab files.

#include <gtest/gtest.h>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/tokenizer/tokenizer.h"

namespace nvhcq::llm {
namespace {

Tokenizer load(const char* name) {
  return Tokenizer::from_gguf(GgufFile::open(std::string(NVHCQ_SOURCE_DIR) +
                                             "/tests/data/vocab/ggml-vocab-" + name + ".gguf"));
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

bool contains(const std::vector<int32_t>& ids, int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(TokenizerSpecial, SentencePieceControlTokensParseOnlyWhenAsked) {
  const Tokenizer tok = load("llama-spm");
  EXPECT_EQ(tok.model(), TokenizerModel::kSentencePiece);
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  const std::vector<int32_t> hello = tok.encode("Hello", false, false);
  ASSERT_FALSE(hello.empty());
  // Parsed: the control tokens become their ids, the text after <s> gets the
  // SentencePiece leading space like the start of a text does.
  EXPECT_EQ(tok.encode("<s>Hello</s>", false, true), concat({{1}, hello, {2}}));
  // Raw: the same characters are ordinary text.
  const std::vector<int32_t> raw = tok.encode("<s>Hello</s>", false, false);
  EXPECT_FALSE(contains(raw, 1));
  EXPECT_FALSE(contains(raw, 2));
  EXPECT_EQ(tok.decode(raw), "<s>Hello</s>");
}

TEST(TokenizerSpecial, BosAndEosFollowTheFile) {
  const Tokenizer spm = load("llama-spm");
  EXPECT_TRUE(spm.add_bos());
  EXPECT_FALSE(spm.add_eos());
  EXPECT_EQ(spm.encode("Hello", true), concat({{1}, spm.encode("Hello", false)}));
  EXPECT_EQ(spm.encode("", true), std::vector<int32_t>{1}) << "SentencePiece: '' -> [BOS]";
  EXPECT_TRUE(spm.encode("", false).empty());

  const Tokenizer deepseek = load("deepseek-llm");  // add_bos_token = true in the file
  EXPECT_EQ(deepseek.encode("Hello", true).front(), 100000);
  const Tokenizer gpt2 = load("gpt-2");  // no add_bos_token: byte-level BPE adds nothing
  EXPECT_FALSE(gpt2.add_bos());
  EXPECT_EQ(gpt2.encode("Hello", true), gpt2.encode("Hello", false));
  EXPECT_EQ(gpt2.encode("a<|endoftext|>b", false, true),
            concat({gpt2.encode("a", false), {50256}, gpt2.encode("b", false)}));
  EXPECT_FALSE(contains(gpt2.encode("a<|endoftext|>b", false, false), 50256));
}

TEST(TokenizerSpecial, EndOfGenerationTokens) {
  const Tokenizer phi3 = load("phi-3");
  EXPECT_EQ(phi3.eos(), 32000);
  EXPECT_EQ(phi3.eot(), 32007) << "<|end|> is found by its text";
  EXPECT_TRUE(phi3.is_eog(32000));
  EXPECT_TRUE(phi3.is_eog(32007));
  EXPECT_FALSE(phi3.is_eog(1));
  EXPECT_FALSE(phi3.is_eog(32010));  // <|user|>
  EXPECT_TRUE(load("llama-spm").is_eog(2));
  EXPECT_TRUE(load("gpt-2").is_eog(50256));
  EXPECT_TRUE(load("starcoder").is_eog(0));
}

TEST(TokenizerSpecial, Phi3ControlTokensSwallowTheWhitespaceAfterThem) {
  const Tokenizer phi3 = load("phi-3");
  const std::vector<int32_t> hi = phi3.encode("Hi", false);
  EXPECT_EQ(phi3.encode("<|user|>\nHi<|end|>", false, true), concat({{32010}, hi, {32007}}));
  EXPECT_EQ(phi3.encode("<|user|>  Hi<|end|>", false, true), concat({{32010}, hi, {32007}}));
}

TEST(TokenizerSpecial, UserDefinedTokensAreAlwaysRecognised) {
  // DeepSeek LLM marks some single characters as user-defined tokens ('ø' is 100002):
  // they are split out of the text even when special tokens are not parsed.
  const Tokenizer tok = load("deepseek-llm");
  EXPECT_EQ(tok.token_text(100002), "\xc3\xb8");
  const std::vector<int32_t> ids = tok.encode("s\xc3\xb8n", false, false);
  EXPECT_TRUE(contains(ids, 100002));
  EXPECT_EQ(tok.decode(ids), "s\xc3\xb8n");
}

TEST(TokenizerDecode, ByteTokensReassembleUtf8) {
  const Tokenizer tok = load("llama-spm");
  const std::string llama = "\xf0\x9f\xa6\x99";  // 🦙: not in the vocabulary, so 4 byte tokens
  const std::vector<int32_t> ids = tok.encode(llama, false);
  ASSERT_EQ(ids.size(), 5u) << "the leading '▁' then 4 byte tokens";
  std::string bytes;
  for (size_t i = 1; i < ids.size(); ++i) {
    EXPECT_EQ(tok.token_attr(ids[i]) & kAttrByte, kAttrByte);
    const std::string piece = tok.token_to_piece(ids[i]);
    ASSERT_EQ(piece.size(), 1u);
    bytes += piece;
  }
  EXPECT_EQ(bytes, llama);
  EXPECT_EQ(tok.decode(ids), llama);
  EXPECT_EQ(tok.token_to_piece(3 + 0x0A), "\n");
  EXPECT_EQ(tok.decode(std::vector<int32_t>{3 + 0xC3, 3 + 0xA9}), "\xc3\xa9") << "é from bytes";
}

TEST(TokenizerDecode, ControlTokensRenderOnlyOnRequest) {
  const Tokenizer tok = load("llama-spm");
  const std::vector<int32_t> ids = tok.encode("Hello world", true);
  ASSERT_EQ(ids.front(), 1);
  EXPECT_EQ(tok.decode(ids), "Hello world");
  DecodeOptions render;
  render.render_special = true;
  EXPECT_EQ(tok.decode(ids, render), "<s> Hello world");
  EXPECT_EQ(tok.token_to_piece(1), "");
  EXPECT_EQ(tok.token_to_piece(1, true), "<s>");
  EXPECT_THROW(tok.token_to_piece(32000), UsageError);
  EXPECT_THROW(tok.token_to_piece(-1), UsageError);
}

TEST(TokenizerDecode, CleanUpSpacesOnlyWhereTheModelWantsIt) {
  const Tokenizer gpt2 = load("gpt-2");
  DecodeOptions clean;
  clean.clean_up_spaces = true;
  const std::string text = "Hello , world ! It 's here ' ok '";
  EXPECT_EQ(gpt2.decode(gpt2.encode(text, false)), text);
  EXPECT_EQ(gpt2.decode(gpt2.encode(text, false), clean), "Hello, world! It's here'ok '");
  const Tokenizer deepseek = load("deepseek-llm");
  EXPECT_FALSE(deepseek.clean_spaces());
  EXPECT_EQ(deepseek.decode(deepseek.encode(text, false), clean), text);
}

}  // namespace
}  // namespace nvhcq::llm
