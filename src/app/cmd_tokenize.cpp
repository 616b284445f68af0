// nvhcq tokenize: prints the token ids of a text under a model's tokenizer, with
// each token's piece unless --ids.

#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "app/commands.h"
#include "base/args.h"
#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/tokenizer/tokenizer.h"

namespace nvhcq::app {
namespace {

// Shows a piece with control characters escaped, so one token stays on one line.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

int run_tokenize(const Args& args) {
  ArgParser parser("nvhcq tokenize",
                   "Print the token ids of TEXT under a GGUF file's tokenizer (a model or a\n"
                   "vocab-only file), one per line with its piece, or on one line with --ids.");
  parser.option("model", "FILE", "the GGUF file whose tokenizer to use", "", 'm')
      .flag("ids", "print only the ids, space-separated on one line")
      .flag("raw", "add no BOS/EOS and treat special-token text as plain text")
      .positional("TEXT", "the text; '-' reads it from stdin");
  const auto r = parser.parse(args);
  if (r.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  const std::string path = r.get("model");
  if (path.empty()) throw UsageError("missing -m FILE\n\n" + parser.usage());
  std::string text = *r.positional("TEXT");
  if (text == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  const llm::GgufFile file = llm::GgufFile::open(path);
  const llm::Tokenizer tok = llm::Tokenizer::from_gguf(file);
  const bool raw = r.flag("raw");
  const std::vector<int32_t> ids = tok.encode(text, /*add_special=*/!raw, /*parse_special=*/!raw);
  if (r.flag("ids")) {
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) line += ' ';
      line += std::to_string(ids[i]);
    }
    std::printf("%s\n", line.c_str());
    return 0;
  }
  for (int32_t id : ids) {
    std::printf("%6d '%s'\n", id,
                printable(tok.token_to_piece(id, /*render_special=*/true)).c_str());
  }
  return 0;
}

}  // namespace nvhcq::app
