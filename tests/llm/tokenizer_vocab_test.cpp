// llama.cpp's tokenizer test vectors (tests/data/vocab): every case of every file
// must give exactly the expected ids (no BOS/EOS, special-token text not parsed),
// and decoding the ids must give back the input text.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "llm/gguf/gguf_file.h"
#include "llm/tokenizer/tokenizer.h"

namespace nvhcq::llm {
namespace {

std::string vocab_dir() { return std::string(NVHCQ_SOURCE_DIR) + "/tests/data/vocab/"; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// The .inp file holds cases separated by "\n__ggml_vocab_test__\n" (the file ends
// with one); the .out file one line of ids per case.
std::vector<VocabCase> read_cases(const std::string& name) {
  const std::string inp = read_text(vocab_dir() + name + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t pos = 0;
  while (pos < inp.size()) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(inp.substr(pos));
      break;
    }
    texts.push_back(inp.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::istringstream out(read_text(vocab_dir() + name + ".out"));
  std::vector<VocabCase> cases;
  std::string line;
  for (size_t i = 0; std::getline(out, line); ++i) {
    VocabCase c;
    if (i < texts.size()) c.text = texts[i];
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(cases.size(), texts.size()) << name << ": .inp and .out disagree";
  return cases;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + " ";
  return s;
}

class VocabFileTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabFileTest, EveryCaseMatchesAndRoundTrips) {
  const std::string name = std::string("ggml-vocab-") + GetParam() + ".gguf";
  GgufFile file = GgufFile::open(vocab_dir() + name);
  Tokenizer tok = Tokenizer::from_gguf(file);
  const std::vector<VocabCase> cases = read_cases(name);
  ASSERT_GE(cases.size(), 40u);
  size_t matched = 0, round_trips = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const VocabCase& c = cases[i];
    const std::vector<int32_t> ids = tok.encode(c.text, /*add_special=*/false, /*parse_special=*/false);
    if (ids == c.ids) {
      ++matched;
    } else {
      ADD_FAILURE() << name << " case " << i << " '" << c.text << "'\n  expected: " << show(c.ids)
                    << "\n  got:      " << show(ids);
    }
    const std::string back = tok.decode(ids);
    if (back == c.text) {
      ++round_trips;
    } else {
      ADD_FAILURE() << name << " case " << i << " decodes to '" << back << "', not '" << c.text << "'";
    }
  }
  std::printf("[ vocab    ] %-30s %zu/%zu cases match, %zu/%zu round trips\n", name.c_str(), matched,
              cases.size(), round_trips, cases.size());
  EXPECT_EQ(matched, cases.size());
  EXPECT_EQ(round_trips, cases.size());
}

INSTANTIATE_TEST_SUITE_P(LlamaCppVectors, VocabFileTest,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "deepseek-llm", "falcon",
                                           "starcoder"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace nvhcq::llm
