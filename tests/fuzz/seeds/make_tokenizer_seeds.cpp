// Writes the seed corpus of the tokenizer fuzzer into the folder given as the only
// argument: every case of the llama.cpp vocab test inputs, once per vocabulary
// (the first byte of a fuzzer input picks the vocabulary), plus special-token text.

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::ifstream in(std::string(NVHCQ_SOURCE_DIR) + "/tests/data/vocab/ggml-vocab-gpt-2.gguf.inp",
                   std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> cases = {"<s>Hello</s>", "<|user|>\nHi<|end|>\n<|assistant|>",
                                    "a<|endoftext|>b", "<fim_prefix>x<fim_suffix>"};
  for (size_t pos = 0; pos < text.size();) {
    const size_t next = text.find(sep, pos);
    cases.push_back(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + sep.size();
  }
  int n = 0;
  for (const std::string& c : cases) {
    for (unsigned selector = 0; selector < 6; ++selector) {
      const unsigned char options = static_cast<unsigned char>(selector | (n % 3 == 0 ? 0x80 : 0));
      std::ofstream out(dir + "/case" + std::to_string(n++), std::ios::binary);
      out.put(static_cast<char>(options));
      out << c;
    }
  }
  return 0;
}
