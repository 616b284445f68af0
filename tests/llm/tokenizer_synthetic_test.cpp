// The SentencePiece and BPE algorithms on tiny hand-made vocabularies, where the
// expected ids follow from the rules by hand: merge order by score or rank, the
// leftmost pair first among equals, byte fallback, ignore_merges. And the errors
// for broken or unsupported tokenizer metadata.

#include <gtest/gtest.h>

#include "base/error.h"
#include "llm/tokenizer/tokenizer.h"

namespace nvhcq::llm {
namespace {

const std::string kSp = "\xe2\x96\x81";  // ▁

GgufMetadata spm_vocab(float score_sp_a, float score_ab) {
  GgufMetadata m;
  m.set_string("tokenizer.ggml.model", "llama");
  m.set("tokenizer.ggml.tokens", GgufValue::string_array({"<unk>", "<s>", "</s>", kSp, "a", "b",
                                                          kSp + "a", "ab", "<0x63>", "aa"}));
  m.set("tokenizer.ggml.scores", GgufValue::array<float>(std::vector<float>{
                                     0, 0, 0, -5, -6, -6, score_sp_a, score_ab, 0, -1}));
  m.set("tokenizer.ggml.token_type",
        GgufValue::array<int32_t>(std::vector<int32_t>{2, 3, 3, 1, 1, 1, 1, 1, 6, 1}));
  return m;
}

TEST(TokenizerSentencePiece, HighestScoringPairMergesFirst) {
  // "ab" is encoded as "▁ab": both "▁a" and "ab" are tokens; the better score wins
  // and "▁ab" is not a token, so the other pair never forms.
  Tokenizer sp_a_first = Tokenizer::from_metadata(spm_vocab(-1, -2));
  EXPECT_EQ(sp_a_first.encode("ab", false), (std::vector<int32_t>{6, 5}));
  Tokenizer ab_first = Tokenizer::from_metadata(spm_vocab(-3, -2));
  EXPECT_EQ(ab_first.encode("ab", false), (std::vector<int32_t>{3, 7}));
  EXPECT_EQ(ab_first.decode(std::vector<int32_t>{3, 7}), "ab");
}

TEST(TokenizerSentencePiece, EqualScoresMergeLeftmostFirstAndBytesFallBack) {
  Tokenizer tok = Tokenizer::from_metadata(spm_vocab(-10, -10));
  // "▁aaa": "aa" at positions 1-2 and 2-3 score the same: the left one merges.
  EXPECT_EQ(tok.encode("aaa", false), (std::vector<int32_t>{3, 9, 4}));
  // 'c' has a byte token <0x63>; 'd' has none, so it becomes <unk>.
  EXPECT_EQ(tok.encode("ac", false), (std::vector<int32_t>{6, 8}));
  EXPECT_EQ(tok.encode("ad", false), (std::vector<int32_t>{6, 0}));
  EXPECT_EQ(tok.decode(std::vector<int32_t>{6, 8}), "ac");
  EXPECT_EQ(tok.encode("a", true), (std::vector<int32_t>{1, 6}));
}

TEST(TokenizerSentencePiece, AddSpacePrefixCanBeTurnedOff) {
  GgufMetadata m = spm_vocab(-1, -2);
  m.set_scalar("tokenizer.ggml.add_space_prefix", false);
  Tokenizer tok = Tokenizer::from_metadata(m);
  EXPECT_EQ(tok.encode("ab", false), (std::vector<int32_t>{7}));
  EXPECT_EQ(tok.decode(std::vector<int32_t>{3, 7}), " ab") << "no prefix to strip either";
}

// Byte-level BPE: "Ġ" is the space.
GgufMetadata bpe_vocab(std::string pre, std::vector<std::string> merges) {
  GgufMetadata m;
  m.set_string("tokenizer.ggml.model", "gpt2");
  m.set_string("tokenizer.ggml.pre", std::move(pre));
  m.set("tokenizer.ggml.tokens",
        GgufValue::string_array({"a", "b", "c", "\xc4\xa0", "ab", "bc", "abc", "\xc4\xa0" "a", "aa",
                                 "<|end|>"}));
  m.set("tokenizer.ggml.token_type",
        GgufValue::array<int32_t>(std::vector<int32_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 3}));
  m.set("tokenizer.ggml.merges", GgufValue::string_array(std::move(merges)));
  return m;
}

TEST(TokenizerBpe, LowestRankMergesFirstLeftmostAmongEquals) {
  Tokenizer tok = Tokenizer::from_metadata(
      bpe_vocab("gpt-2", {"b c", "a b", "a bc", "a a", "\xc4\xa0 a", "c c"}));
  EXPECT_EQ(tok.model(), TokenizerModel::kBytePairBpe);
  EXPECT_EQ(tok.encode("abc", false), (std::vector<int32_t>{6}));     // bc, then a+bc
  EXPECT_EQ(tok.encode("aaa", false), (std::vector<int32_t>{8, 0}));  // (aa)(a)
  EXPECT_EQ(tok.encode(" ab", false), (std::vector<int32_t>{3, 4}));  // "a b" beats "Ġ a"
  // "c c" merges, but "cc" is no token: its bytes' tokens stand in.
  EXPECT_EQ(tok.encode("cc", false), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(tok.decode(std::vector<int32_t>{3, 4}), " ab");
  EXPECT_EQ(tok.eot(), 9);
  EXPECT_TRUE(tok.is_eog(9));
  EXPECT_EQ(tok.bos(), kNoToken) << "the BPE default id 11 is beyond this vocabulary";
}

TEST(TokenizerBpe, IgnoreMergesTakesWholeWordTokens) {
  std::vector<std::string> merges = {"a b"};
  GgufMetadata plain = bpe_vocab("gpt-2", merges);
  EXPECT_EQ(Tokenizer::from_metadata(plain).encode("abc", false), (std::vector<int32_t>{4, 2}));
  GgufMetadata llama3 = bpe_vocab("llama-bpe", merges);
  llama3.set_scalar<uint32_t>("tokenizer.ggml.bos_token_id", 9);
  Tokenizer tok = Tokenizer::from_metadata(llama3);
  EXPECT_EQ(tok.encode("abc", false), (std::vector<int32_t>{6}));
  EXPECT_TRUE(tok.add_bos()) << "the llama3 pre-tokenizer implies add_bos";
  EXPECT_EQ(tok.encode("abc", true), (std::vector<int32_t>{9, 6}));
}

TEST(TokenizerBpe, OverlappingSpecialTokensLongestFirst) {
  // "<x>" and "x>yy" overlap in "<x>yy"; the longer one is split out first
  // (llama.cpp's order), leaving "<" as text.
  GgufMetadata m = bpe_vocab("gpt-2", {"a b"});
  m.set("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c", "\xc4\xa0", "ab", "bc",
                                                          "abc", "<", "<x>", "x>yy"}));
  m.set("tokenizer.ggml.token_type",
        GgufValue::array<int32_t>(std::vector<int32_t>{1, 1, 1, 1, 1, 1, 1, 1, 3, 4}));
  Tokenizer tok = Tokenizer::from_metadata(m);
  EXPECT_EQ(tok.encode("<x>yy", false, true), (std::vector<int32_t>{7, 9}));
  // Without parse_special the control token "<x>" is text, the user-defined "x>yy" is not.
  EXPECT_EQ(tok.encode("<x>yy", false, false), (std::vector<int32_t>{7, 9}));
  EXPECT_EQ(tok.encode("c<x>c", false, true), (std::vector<int32_t>{2, 8, 2}));
  EXPECT_EQ(tok.encode("ab<x>", false, false), (std::vector<int32_t>{4, 7})) << "'x', '>' have no tokens";
  EXPECT_EQ(tok.decode(std::vector<int32_t>{2, 8, 2}), "cc");
  DecodeOptions render;
  render.render_special = true;
  EXPECT_EQ(tok.decode(std::vector<int32_t>{2, 8, 2}, render), "c<x>c");
}

std::string load_error(const GgufMetadata& m) {
  try {
    Tokenizer::from_metadata(m);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "<loaded>";
}

TEST(TokenizerErrors, BrokenOrUnsupportedMetadataNamesTheProblem) {
  auto has = [](const std::string& msg, const char* fragment) {
    return msg.find(fragment) != std::string::npos;
  };
  GgufMetadata none;
  EXPECT_TRUE(has(load_error(none), "missing metadata key 'tokenizer.ggml.model'"));

  GgufMetadata bert = spm_vocab(-1, -1);
  bert.set_string("tokenizer.ggml.model", "bert");
  EXPECT_TRUE(has(load_error(bert), "'bert' is not supported"));

  EXPECT_TRUE(has(load_error(bpe_vocab("no-such-pre", {"a b"})), "'no-such-pre'"));

  GgufMetadata no_merges = bpe_vocab("gpt-2", {});
  no_merges.erase("tokenizer.ggml.merges");
  EXPECT_TRUE(has(load_error(no_merges), "missing metadata key 'tokenizer.ggml.merges'"));

  GgufMetadata dup = spm_vocab(-1, -1);
  dup.set("tokenizer.ggml.tokens", GgufValue::string_array({"<unk>", "<s>", "</s>", "a", "a", "b",
                                                            "c", "d", "e", "f"}));
  EXPECT_TRUE(has(load_error(dup), "ids 3 and 4 have the same text"));

  GgufMetadata short_scores = spm_vocab(-1, -1);
  short_scores.set("tokenizer.ggml.scores", GgufValue::array<float>(std::vector<float>{0, 1}));
  EXPECT_TRUE(has(load_error(short_scores), "has 2 entries for 10 tokens"));

  GgufMetadata tokens_not_array = spm_vocab(-1, -1);
  tokens_not_array.set_string("tokenizer.ggml.tokens", "abc");
  EXPECT_TRUE(has(load_error(tokens_not_array), "expected an array of strings"));

  GgufMetadata bos_missing = bpe_vocab("gpt-2", {"a b"});
  bos_missing.set_scalar("tokenizer.ggml.add_bos_token", true);
  EXPECT_TRUE(has(load_error(bos_missing), "add_bos_token is true"));

  GgufMetadata bad_id = spm_vocab(-1, -1);
  bad_id.set_scalar<uint32_t>("tokenizer.ggml.eos_token_id", 1000);  // ignored, default kept
  EXPECT_EQ(Tokenizer::from_metadata(bad_id).eos(), 2);
}

}  // namespace
}  // namespace nvhcq::llm
