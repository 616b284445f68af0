// Pre-tokenizer splits against an independent reference: the expected words were
// produced by Python's `regex` module running each model's original split patterns
// in sequence (as llama.cpp and Hugging Face apply them). The same comparison on
// 12,000 random strings mixing ASCII, Unicode letters, marks, digits, CJK, emoji
// and non-ASCII whitespace found no difference for any of the pre-tokenizers.

#include <gtest/gtest.h>

#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/unicode_tables.h"

namespace nvhcq::llm {
namespace {

struct SplitCase {
  const char* pre;
  std::string text;
  std::vector<std::string> words;
};

const SplitCase kCases[] = {
    {"gpt-2", "Hello world 12345 I'VE\n\n  x", {"Hello", " world", " 12345", " I", "'", "VE", "\n\n ", " x"}},
    {"gpt-2", "it's  you'll\tgo!!", {"it", "'s", " ", " you", "'ll", "\t", "go", "!!"}},
    {"gpt-2", "na\xc3\xafve caf\xc3\xa9\xc2\xa0x", {"na\xc3\xafve", " caf\xc3\xa9", "\xc2\xa0", "x"}},
    {"llama3", "Hello world 12345 I'VE\n\n  x", {"Hello", " world", " ", "123", "45", " I", "'VE", "\n\n", " ", " x"}},
    {"llama3", "it's  you'll\tgo!!\r\n", {"it", "'s", " ", " you", "'ll", "\tgo", "!!\r\n"}},
    {"llama3", "$100.5 \xe3\x80\x80\xe4\xb8\xad\xe6\x96\x87", {"$", "100", ".", "5", " ", "\xe3\x80\x80\xe4\xb8\xad\xe6\x96\x87"}},
    {"qwen2", "Hello world 12345 I'VE\n\n  x", {"Hello", " world", " ", "1", "2", "3", "4", "5", " I", "'VE", "\n\n", " ", " x"}},
    {"qwen2", "a1b22", {"a", "1", "b", "2", "2"}},
    {"starcoder", "x = 3.14159 + y2", {"x", " =", " ", "3", ".", "1", "4", "1", "5", "9", " +", " y", "2"}},
    {"starcoder", "  def f():\n\treturn 42", {" ", " def", " f", "():", "\n", "\t", "return", " ", "4", "2"}},
    {"falcon", "x = 3.14159 + y2", {"x", " ", "=", " 3", ".", "141", "59", " ", "+", " y", "2"}},
    {"falcon", "<a href=`1`>|1234567|", {"<", "a", " href", "=`", "1", "`>|", "123", "456", "7", "|"}},
    {"default", "x = 3.14159 + y2", {"x", " ", "=", " ", "3", ".", "141", "59", " ", "+", " y", "2"}},
    {"default", "1234567 \xc2\xb2\xc2\xb3", {"123", "456", "7", " ", "\xc2\xb2\xc2\xb3"}},
    {"deepseek-llm", "Hello, \xe4\xb8\x96\xe7\x95\x8c! 123\xe3\x80\x80x  ", {"Hello", ",", " ", "\xe4\xb8\x96\xe7\x95\x8c", "!", " ", "123", "\xe3\x80\x80", "x", "  "}},
    {"deepseek-llm", "\xce\xa9mega \xce\x90?\r\nok", {"\xce\xa9", "mega", " \xce\x90", "?", "\r", "\n", "ok"}},
    {"deepseek-coder", "int x=42;\n// \xe6\xb3\xa8\xe9\x87\x8a", {"int", " x", "=", "4", "2", ";", "\n", "//", " ", "\xe6\xb3\xa8\xe9\x87\x8a"}},
    {"deepseek-coder", "\xce\xa9mega!! 7", {"\xce\xa9mega", "!!", " ", "7"}},
};

TEST(PreTokenizer, SplitsMatchTheReferenceRegexEngine) {
  for (const SplitCase& c : kCases) {
    auto settings = pre_tokenizer_from_name(c.pre);
    ASSERT_TRUE(settings.has_value()) << c.pre;
    EXPECT_EQ(pre_tokenize(settings->kind, c.text), c.words) << c.pre << ": '" << c.text << "'";
  }
}

TEST(PreTokenizer, WordsConcatenateBackToTheText) {
  const std::string text = "Tab\tnew\nline\r\n  spaces\xc2\xa0nbsp 12345678 'S 'll \xf0\x9f\xa6\x99!";
  for (const char* name : {"default", "gpt-2", "llama3", "qwen2", "deepseek-llm", "deepseek-coder",
                           "falcon", "starcoder"}) {
    std::string joined;
    for (const auto& w : pre_tokenize(pre_tokenizer_from_name(name)->kind, text)) {
      EXPECT_FALSE(w.empty()) << name;
      joined += w;
    }
    EXPECT_EQ(joined, text) << name;
  }
  // Invalid UTF-8 comes out as U+FFFD, one per bad byte.
  auto words = pre_tokenize(PreTokenizer::kGpt2, "a\xff\xc3");
  std::string joined;
  for (const auto& w : words) joined += w;
  EXPECT_EQ(joined, "a\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_TRUE(pre_tokenize(PreTokenizer::kLlama3, "").empty());
}

TEST(PreTokenizer, NamesAndSettingsFollowLlamaCpp) {
  EXPECT_EQ(pre_tokenizer_from_name("llama-bpe")->kind, PreTokenizer::kLlama3);
  EXPECT_TRUE(pre_tokenizer_from_name("llama-bpe")->ignore_merges);
  EXPECT_TRUE(pre_tokenizer_from_name("llama-bpe")->add_bos);
  EXPECT_FALSE(pre_tokenizer_from_name("dbrx")->ignore_merges);
  EXPECT_FALSE(pre_tokenizer_from_name("deepseek-llm")->clean_spaces);
  EXPECT_TRUE(pre_tokenizer_from_name("gpt-2")->clean_spaces);
  EXPECT_FALSE(pre_tokenizer_from_name("glm4")->has_bos);
  EXPECT_FALSE(pre_tokenizer_from_name("no-such-pre").has_value());
}

TEST(Unicode, CategoriesWhitespaceAndCase) {
  using namespace unicode;
  EXPECT_STREQ(kUnicodeVersion, "14.0.0");
  EXPECT_EQ(flags('a'), kLetter);
  EXPECT_EQ(flags('7'), kNumber);
  EXPECT_EQ(flags(' '), kSeparator | kWhitespace);
  EXPECT_EQ(flags('\n'), kOther | kWhitespace);
  EXPECT_EQ(flags('$'), kSymbol);
  EXPECT_EQ(flags('_'), kPunctuation);
  EXPECT_EQ(flags(0x1C), kOther) << "not White_Space, though Python's isspace() says so";
  EXPECT_EQ(flags(0x00E9), kLetter);           // é
  EXPECT_EQ(flags(0x0301), kMark);             // combining acute
  EXPECT_EQ(flags(0x00B2), kNumber);           // ²
  EXPECT_EQ(flags(0x3000), kSeparator | kWhitespace);
  EXPECT_EQ(flags(0x0085), kOther | kWhitespace);
  EXPECT_EQ(flags(0x4E2D), kLetter);           // 中
  EXPECT_EQ(flags(0x1F999), kSymbol);          // 🦙
  EXPECT_EQ(flags(0x0378), kOther) << "unassigned code points are \\p{C}";
  EXPECT_EQ(flags(0x110000), 0);
  EXPECT_EQ(to_lower('Q'), uint32_t{'q'});
  EXPECT_EQ(to_lower(0x0416), 0x0436u);        // Ж -> ж
  EXPECT_EQ(to_lower(0x0130), uint32_t{'i'});  // İ -> i (first code point of "i̇")
  EXPECT_EQ(to_lower(0x4E2D), 0x4E2Du);
  // Every code point has some category (the tables cover 0..U+10FFFF).
  for (uint32_t cp = 0; cp <= kMaxCodepoint; cp += 97) EXPECT_NE(flags(cp) & 0x7F, 0) << cp;
}

TEST(Unicode, Utf8DecodingNeverFails) {
  using unicode::decode_utf8;
  EXPECT_EQ(decode_utf8("a\xc3\xa9\xe4\xb8\xad\xf0\x9f\xa6\x99"),
            (std::vector<uint32_t>{'a', 0xE9, 0x4E2D, 0x1F999}));
  // A stray continuation byte, a truncated sequence, an impossible lead byte, a
  // code point beyond U+10FFFF: each bad byte is one U+FFFD.
  EXPECT_EQ(decode_utf8("\x80"), (std::vector<uint32_t>{0xFFFD}));
  EXPECT_EQ(decode_utf8("\xe4\xb8"), (std::vector<uint32_t>{0xFFFD, 0xFFFD}));
  EXPECT_EQ(decode_utf8("\xff" "a"), (std::vector<uint32_t>{0xFFFD, 'a'}));
  EXPECT_EQ(decode_utf8("\xf4\x90\x80\x80").front(), 0xFFFDu);
  for (uint32_t cp : {0x24u, 0xA2u, 0x20ACu, 0x10348u, 0x10FFFFu}) {
    EXPECT_EQ(decode_utf8(unicode::encode_utf8(cp)), std::vector<uint32_t>{cp});
  }
}

}  // namespace
}  // namespace nvhcq::llm
