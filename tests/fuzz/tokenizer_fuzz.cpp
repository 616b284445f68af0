// libFuzzer target for the tokenizers: the first input byte picks one of the six
// real vocabularies of tests/data/vocab and the encode options, the rest is text.
// Any text must encode to valid ids and decode without error; where decoding must
// give the text back, it must: valid UTF-8, only ordinary tokens produced, for
// SentencePiece no literal U+2581 (which it reads as a space), for BPE only bytes
// the vocabulary has a token for (Falcon has none for most control characters;
// like llama.cpp and Hugging Face, nvhcq drops those).

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.h"
#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/tokenizer/unicode.h"

namespace {

using nvhcq::llm::GgufFile;
using nvhcq::llm::Tokenizer;
using nvhcq::llm::TokenizerModel;

constexpr const char* kVocabs[] = {"llama-spm", "phi-3", "gpt-2", "deepseek-llm", "falcon",
                                   "starcoder"};
constexpr size_t kNumVocabs = sizeof(kVocabs) / sizeof(kVocabs[0]);

std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<Tokenizer>> all;
  return all;
}

bool valid_utf8(const std::string& s) {
  std::string back;
  for (uint32_t cp : nvhcq::llm::unicode::decode_utf8(s)) nvhcq::llm::unicode::append_utf8(back, cp);
  return back == s;
}

// Whether every byte of `text` has a byte-level token of its own.
bool bytes_covered(const Tokenizer& tok, const std::string& text) {
  for (unsigned char b : text) {
    const std::string one(1, static_cast<char>(b));
    if (tok.find_token(nvhcq::llm::byte_level_encode(one)) == nvhcq::llm::kNoToken) return false;
  }
  return true;
}

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "tokenizer fuzz: %s for text of %zu bytes\n", what, text.size());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* name : kVocabs) {
    const std::string path =
        std::string(NVHCQ_SOURCE_DIR) + "/tests/data/vocab/ggml-vocab-" + name + ".gguf";
    tokenizers().push_back(std::make_unique<Tokenizer>(Tokenizer::from_gguf(GgufFile::open(path))));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const Tokenizer& tok = *tokenizers()[selector % kNumVocabs];
  const bool add_special = selector & 0x40;
  const bool parse_special = selector & 0x80;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  const std::vector<int32_t> ids = tok.encode(text, add_special, parse_special);
  bool ordinary = true;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= tok.vocab_size()) fail("id out of range", text);
    const uint32_t attr = tok.token_attr(id);
    if (!(attr & (nvhcq::llm::kAttrNormal | nvhcq::llm::kAttrByte))) ordinary = false;
  }
  nvhcq::llm::DecodeOptions render;
  render.render_special = true;
  render.clean_up_spaces = true;
  (void)tok.decode(ids, render);
  const std::string back = tok.decode(ids);

  const bool spm = tok.model() == TokenizerModel::kSentencePiece;
  const bool round_trip_expected =
      ordinary && !add_special && valid_utf8(text) &&
      (spm ? text.find("\xe2\x96\x81") == std::string::npos : bytes_covered(tok, text));
  if (round_trip_expected && back != text) fail("decode(encode(text)) != text", text);
  return 0;
}
