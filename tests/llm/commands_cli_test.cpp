// The nvhcq commands run, synth, quantize and tokenize, run as the real binary:
// exit codes (0 ok, 1 failed, 2 usage), --help, clear errors for bad files, and
// the output of each.

#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "llm/gguf/gguf_file.h"
#include "model_test_models.h"

namespace nvhcq::llm {
namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs the nvhcq binary with `args`, feeding `input` on stdin.
Result nvhcq(const std::vector<std::string>& args, const std::string& input = "") {
  static int calls = 0;
  const std::string base = model_test::temp_path("cmd" + std::to_string(++calls));
  const std::string in_path = base + ".in", out_path = base + ".out", err_path = base + ".err";
  std::ofstream(in_path, std::ios::binary) << input;
  const std::string exe = std::string(NVHCQ_BINARY_DIR) + "/nvhcq";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  if (r.rc == 127) ADD_FAILURE() << "could not run " << exe << " (build the nvhcq target)";
  return r;
}

// The command tests need the nvhcq binary of this build (`make` builds it; a build
// of test_llm alone does not, and then they skip, saying so).
class CommandsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string exe = std::string(NVHCQ_BINARY_DIR) + "/nvhcq";
    if (access(exe.c_str(), X_OK) != 0) GTEST_SKIP() << exe << " is not built";
  }
};

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string vocab_file(const std::string& name) {
  return std::string(NVHCQ_SOURCE_DIR) + "/tests/data/vocab/ggml-vocab-" + name + ".gguf";
}

TEST_F(CommandsCli, EveryCommandHasHelp) {
  for (const char* cmd : {"run", "synth", "quantize", "tokenize"}) {
    const Result r = nvhcq({cmd, "--help"});
    EXPECT_EQ(r.rc, 0) << cmd << r.err;
    EXPECT_TRUE(has(r.out, std::string("usage: nvhcq ") + cmd)) << r.out;
  }
  const Result top = nvhcq({"--help"});
  EXPECT_TRUE(has(top.out, "tokenize")) << top.out;
  EXPECT_TRUE(has(nvhcq({"synth", "--help"}).out, "llama-3.1-8b"));
  EXPECT_TRUE(has(nvhcq({"quantize", "--help"}).out, "q4_k_m"));
}

TEST_F(CommandsCli, RunRefusesBadArgumentsAndFiles) {
  const std::string& model = model_test::tiny_model();
  Result r = nvhcq({"run"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.err, "missing -m")) << r.err;
  EXPECT_EQ(nvhcq({"run", "-m", model}).rc, 2);  // no prompt
  EXPECT_EQ(nvhcq({"run", "-m", model, "-p", "x", "--temp", "warm"}).rc, 2);
  EXPECT_EQ(nvhcq({"run", "-m", model, "-p", "x", "--top-p", "2"}).rc, 2);
  EXPECT_EQ(nvhcq({"run", "-m", model, "-p", "x", "-n", "-5"}).rc, 2);
  EXPECT_EQ(nvhcq({"run", "-m", model, "-p", "x", "--bogus"}).rc, 2);
  r = nvhcq({"run", "-m", model, "-p", "x", "--backend", "tpu"});
  EXPECT_EQ(r.rc, 2);
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    r = nvhcq({"run", "-m", model, "-p", "x", "--backend", "nv"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(has(r.err, "--backend cpu runs without one")) << r.err;
  }

  const std::string missing = model_test::temp_path("no-such-model.gguf");
  r = nvhcq({"run", "-m", missing, "-p", "x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.err, missing)) << r.err;
  const std::string junk = model_test::temp_path("junk-model.gguf");
  std::ofstream(junk) << "GGUF but not really";
  r = nvhcq({"run", "-m", junk, "-p", "x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.err, "junk-model.gguf")) << r.err;
  // A vocab-only file is a GGUF but not a model.
  r = nvhcq({"run", "-m", vocab_file("llama-spm"), "-p", "x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.err, "error:")) << r.err;
}

// bench: llama-bench's table on the CPU backend (the GPU ones run on the GPU
// machine), its JSON, and refused combinations.
TEST_F(CommandsCli, BenchPrintsTheTableAndJsonAndRefusesBadRequests) {
  const std::string& model = model_test::tiny_model();
  EXPECT_TRUE(has(nvhcq({"bench", "--help"}).out, "--timeline"));
  EXPECT_EQ(nvhcq({"bench"}).rc, 2);
  EXPECT_EQ(nvhcq({"bench", "-m", model, "--decode", "persistent", "--timeline"}).rc, 2);
  EXPECT_EQ(nvhcq({"bench", "-m", model, "--decode", "sometimes"}).rc, 2);
  EXPECT_EQ(nvhcq({"bench", "-m", model, "-r", "0"}).rc, 2);
  EXPECT_EQ(nvhcq({"bench", "-m", model, "--backend", "tpu"}).rc, 2);
  const std::string json = model_test::temp_path("bench.json");
  const Result r = nvhcq({"bench", "-m", model, "-p", "8", "-n", "4", "-r", "2", "--backend", "cpu", "--json", json});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(has(r.out, "| cpu | pp8 |")) << r.out;
  EXPECT_TRUE(has(r.out, "| cpu | tg4 |")) << r.out;
  const std::string doc = slurp(json);
  EXPECT_TRUE(has(doc, "\"test\": \"tg4\"")) << doc;
  EXPECT_TRUE(has(doc, "\"timeline\": {\"step_us\": 0, \"classes\": []}")) << doc;

  // --ctx-size sets the KV cache's positions; fewer than the tests need is refused.
  const Result small = nvhcq({"bench", "-m", model, "-p", "8", "-n", "4", "-c", "8", "--backend", "cpu"});
  EXPECT_EQ(small.rc, 2);
  EXPECT_TRUE(has(small.err, "need 9 positions")) << small.err;
  auto kv_bytes = [&](const std::string& ctx) {
    const Result k = nvhcq({"bench", "-m", model, "-p", "0", "-n", "2", "-r", "1", "-c", ctx, "--backend", "cpu",
                            "--json", json});
    EXPECT_EQ(k.rc, 0) << k.err;
    const std::string text = slurp(json), key = "\"kv_cache_bytes\": ";
    const size_t at = text.find(key);
    return at == std::string::npos ? 0ull : std::stoull(text.substr(at + key.size()));
  };
  const unsigned long long kv32 = kv_bytes("32"), kv64 = kv_bytes("64");
  EXPECT_GT(kv32, 0ull);
  EXPECT_EQ(kv64, 2 * kv32);
}

TEST_F(CommandsCli, RunStreamsDeterministicGreedyTextWithTimings) {
  const std::string& model = model_test::tiny_model("llama", LlamaFtype::MOSTLY_Q8_0);
  const std::vector<std::string> args = {"run", "-m", model,    "-p", "Once upon a time",
                                         "-n",  "12", "--temp", "0"};
  const Result a = nvhcq(args);
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_TRUE(a.out.starts_with("Once upon a time")) << a.out;
  EXPECT_GT(a.out.size(), std::string("Once upon a time\n").size());
  EXPECT_TRUE(has(a.err, "prompt:")) << a.err;
  EXPECT_TRUE(has(a.err, "generation: 12 tokens")) << a.err;
  EXPECT_TRUE(has(a.err, "tok/s")) << a.err;
  std::vector<std::string> one_thread = args;
  one_thread.insert(one_thread.end(), {"--threads", "1", "--verbose"});
  const Result b = nvhcq(one_thread);
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_EQ(b.out, a.out);
  EXPECT_TRUE(has(b.err, "memory: resident")) << b.err;
  // Sampling with a seed repeats itself.
  const std::vector<std::string> seeded = {"run", "-m", model,    "-p", "Hello",
                                           "-n",  "10", "--seed", "5",  "--no-echo"};
  const Result c = nvhcq(seeded), d = nvhcq(seeded);
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(c.out, d.out);
  EXPECT_TRUE(has(c.err, "seed 5")) << c.err;
}

TEST_F(CommandsCli, SynthWritesAModelAndRefusesBadRequests) {
  const std::string out = model_test::temp_path("cli-tiny.gguf");
  Result r = nvhcq({"synth", "--preset", "tiny", "--type", "q4_0", "--seed", "9", "-o", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(has(r.out, "wrote")) << r.out;
  const GgufFile f = GgufFile::open(out);
  EXPECT_EQ(f.metadata().get_u32("general.file_type"), 2u);  // MOSTLY_Q4_0
  EXPECT_EQ(f.tensor_info("blk.0.ffn_up.weight").type, GgmlType::Q4_0);

  EXPECT_EQ(nvhcq({"synth", "--preset", "huge", "-o", out}).rc, 2);
  EXPECT_EQ(nvhcq({"synth", "--type", "q9_9", "-o", out}).rc, 2);
  EXPECT_EQ(nvhcq({"synth", "--arch", "gptj", "-o", out}).rc, 2);
  EXPECT_EQ(nvhcq({"synth", "--preset", "tiny"}).rc, 2);  // no -o
  r = nvhcq({"synth", "--vocab", model_test::temp_path("no-vocab.gguf"), "-o",
             model_test::temp_path("v.gguf")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.err, "no-vocab.gguf")) << r.err;
}

TEST_F(CommandsCli, QuantizeConvertsWithTheMixAndRefusesBadRequests) {
  const std::string& in = model_test::tiny_model();
  const std::string out = model_test::temp_path("cli-q8.gguf");
  Result r = nvhcq({"quantize", in, out, "q8_0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const GgufFile f = GgufFile::open(out);
  EXPECT_EQ(f.metadata().get_u32("general.file_type"), 7u);
  EXPECT_EQ(f.tensor_info("output.weight").type, GgmlType::Q8_0);
  EXPECT_EQ(nvhcq({"run", "-m", out, "-p", "hi", "-n", "3", "--temp", "0"}).rc, 0);

  EXPECT_EQ(nvhcq({"quantize", in, out}).rc, 2);
  EXPECT_EQ(nvhcq({"quantize", in, out, "q7_x"}).rc, 2);
  r = nvhcq({"quantize", model_test::temp_path("absent.gguf"), out, "q8_0"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.err, "absent.gguf")) << r.err;
}

// Every test string of llama.cpp's llama-spm vectors through `tokenize --ids --raw -`.
TEST_F(CommandsCli, TokenizeMatchesTheVocabTestVectors) {
  const std::string vocab = vocab_file("llama-spm");
  const std::string inp = slurp(vocab + ".inp"), outp = slurp(vocab + ".out");
  std::vector<std::string> texts, expected;
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (size_t pos = 0;;) {
    const size_t at = inp.find(sep, pos);
    if (at == std::string::npos) break;
    texts.push_back(inp.substr(pos, at - pos));
    pos = at + sep.size();
  }
  std::istringstream lines(outp);
  for (std::string line; std::getline(lines, line);) expected.push_back(line);
  ASSERT_GE(texts.size(), 10u);
  ASSERT_GE(expected.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const Result r = nvhcq({"tokenize", "-m", vocab, "--ids", "--raw", "-"}, texts[i]);
    ASSERT_EQ(r.rc, 0) << r.err;
    // The .out lines start with a space before each id.
    std::string want;
    std::istringstream ids(expected[i]);
    for (std::string id; ids >> id;) want += (want.empty() ? "" : " ") + id;
    EXPECT_EQ(r.out, want + "\n") << "case " << i << ": '" << texts[i] << "'";
  }
}

TEST_F(CommandsCli, TokenizePrintsPiecesAndAddsBosUnlessRaw) {
  const std::string vocab = vocab_file("llama-spm");
  Result r = nvhcq({"tokenize", "-m", vocab, "Hello world"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // BOS (1, "<s>") first, then the pieces, one per line.
  EXPECT_TRUE(r.out.starts_with("     1 '<s>'\n")) << r.out;
  EXPECT_TRUE(has(r.out, "'world'") || has(r.out, "' world'")) << r.out;
  r = nvhcq({"tokenize", "-m", vocab, "--ids", "<s>Hello"});
  EXPECT_TRUE(r.out.starts_with("1 1 ")) << r.out;  // BOS, then <s> parsed as special
  r = nvhcq({"tokenize", "-m", vocab, "--ids", "--raw", "<s>Hello"});
  EXPECT_FALSE(r.out.starts_with("1 ")) << r.out;     // no BOS, "<s>" is text
  EXPECT_EQ(nvhcq({"tokenize", "-m", vocab}).rc, 2);  // no TEXT
  r = nvhcq({"tokenize", "-m", model_test::temp_path("nothing.gguf"), "x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.err, "nothing.gguf")) << r.err;
}

}  // namespace
}  // namespace nvhcq::llm
