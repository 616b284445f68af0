// The vocab-only GGUF files of tests/data/vocab (written by llama.cpp's converters)
// load through GgufFile and expose their tokenizer metadata.

#include <gtest/gtest.h>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"

namespace nvhcq::llm {
namespace {

struct VocabFile {
  const char* name;
  const char* model;  // tokenizer.ggml.model
  const char* pre;    // tokenizer.ggml.pre
  uint64_t n_tokens;
  bool has_merges;
  uint32_t bos;
};

const VocabFile kVocabFiles[] = {
    {"llama-spm", "llama", "default", 32000, false, 1},
    {"phi-3", "llama", "default", 32064, false, 1},
    {"gpt-2", "gpt2", "gpt-2", 50257, true, 50256},
    {"deepseek-llm", "gpt2", "deepseek-llm", 102400, true, 100000},
    {"falcon", "gpt2", "falcon", 65024, true, 11},
    {"starcoder", "gpt2", "starcoder", 49152, true, 0},
};

std::string vocab_path(const char* name) {
  return std::string(NVHCQ_SOURCE_DIR) + "/tests/data/vocab/ggml-vocab-" + name + ".gguf";
}

TEST(GgufVocabFiles, LoadAndExposeTokenizerMetadata) {
  for (const VocabFile& v : kVocabFiles) {
    SCOPED_TRACE(v.name);
    GgufFile f = GgufFile::open(vocab_path(v.name));
    EXPECT_EQ(f.version(), 3u);
    EXPECT_TRUE(f.tensors().empty());
    const GgufMetadata& m = f.metadata();
    EXPECT_EQ(m.get_string("tokenizer.ggml.model"), v.model);
    EXPECT_EQ(m.get_string("tokenizer.ggml.pre"), v.pre);
    const auto& tokens = m.get_string_array("tokenizer.ggml.tokens");
    EXPECT_EQ(tokens.size(), v.n_tokens);
    EXPECT_EQ(m.get_i32_array("tokenizer.ggml.token_type").size(), v.n_tokens);
    EXPECT_EQ(m.contains("tokenizer.ggml.merges"), v.has_merges);
    if (v.has_merges) {
      const auto& merges = m.get_string_array("tokenizer.ggml.merges");
      ASSERT_FALSE(merges.empty());
      EXPECT_NE(merges.front().find(' '), std::string::npos) << "a merge is 'left right'";
    } else {
      EXPECT_EQ(m.get_f32_array("tokenizer.ggml.scores").size(), v.n_tokens);
    }
    EXPECT_EQ(m.get_u32("tokenizer.ggml.bos_token_id"), v.bos);
    EXPECT_FALSE(m.get_string("general.architecture").empty());
  }
}

TEST(GgufVocabFiles, KnownTokensAreWhereLlamaCppPutsThem) {
  GgufFile spm = GgufFile::open(vocab_path("llama-spm"));
  const auto& tokens = spm.metadata().get_string_array("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(spm.metadata().get_i32_array("tokenizer.ggml.token_type")[3], 6) << "byte token";
  EXPECT_TRUE(spm.metadata().get_bool("tokenizer.ggml.add_bos_token"));

  GgufFile gpt2 = GgufFile::open(vocab_path("gpt-2"));
  EXPECT_EQ(gpt2.metadata().get_string_array("tokenizer.ggml.tokens")[50256], "<|endoftext|>");
  EXPECT_EQ(gpt2.metadata().get_string_array("tokenizer.ggml.merges")[0], "\xc4\xa0 t");  // "Ġ t"
}

TEST(GgufVocabFiles, MissingFileIsAnErrorNamingIt) {
  try {
    GgufFile::open(vocab_path("does-not-exist"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does-not-exist"), std::string::npos);
  }
}

}  // namespace
}  // namespace nvhcq::llm
