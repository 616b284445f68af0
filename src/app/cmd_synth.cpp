// nvhcq synth: writes a GGUF model with seeded random weights at a real model's
// shape (see llm/synth/model_synthesizer.h).

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

#include "app/commands.h"
#include "app/thread_option.h"
#include "base/args.h"
#include "base/error.h"
#include "cpu/thread_pool.h"
#include "llm/synth/file_type_names.h"
#include "llm/synth/model_synthesizer.h"

namespace nvhcq::app {

int run_synth(const Args& args) {
  ArgParser parser(
      "nvhcq synth",
      "Write a LLaMA-family GGUF model with seeded random weights at a preset's exact\n"
      "shape, quantized with llama.cpp's mix for --type, with the tokenizer of --vocab\n"
      "(padded to the preset's vocabulary) or a byte-level BPE tokenizer of its own.");
  parser.option("arch", "ARCH", "architecture: llama, mistral or qwen2 (Q/K/V biases)", "llama")
      .option("preset", "NAME", "model shape: " + llm::synth_preset_names(), "tiny")
      .option("type", "TYPE", "weight type / llama.cpp mix: " + llm::file_type_names(), "f16")
      .option("vocab", "FILE",
              "GGUF file whose tokenizer to use (e.g. tests/data/vocab/ggml-vocab-*.gguf)")
      .option("seed", "N", "seed of the random weights", "1")
      .option("threads", "N", "threads (default: all cores, or NVHCQ_THREADS)")
      .option("output", "FILE", "the GGUF file to write", "", 'o')
      .flag("quiet", "no progress on stderr", 'q');
  const auto r = parser.parse(args);
  if (r.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  llm::SynthOptions o;
  o.arch = r.get("arch");
  const auto preset = llm::find_synth_preset(r.get("preset"));
  if (!preset) {
    throw UsageError("unknown --preset '" + r.get("preset") + "' (one of " +
                     llm::synth_preset_names() + ")");
  }
  o.preset = *preset;
  const auto ftype = llm::parse_file_type(r.get("type"));
  if (!ftype) {
    throw UsageError("unknown --type '" + r.get("type") + "' (one of " + llm::file_type_names() +
                     ")");
  }
  o.ftype = *ftype;
  o.vocab_path = r.get("vocab");
  const long long seed = r.get_int("seed");
  if (seed < 0) throw UsageError("--seed must not be negative");
  o.seed = static_cast<uint64_t>(seed);
  o.output_path = r.get("output");
  if (o.output_path.empty()) throw UsageError("missing -o OUT.gguf\n\n" + parser.usage());
  int threads = thread_count_option(r);
  // Progress redraws one line: only worth it on a terminal.
  const bool quiet = r.flag("quiet") || !isatty(fileno(stderr));
  int last_percent = -1;
  o.progress = [&](const std::string& tensor, double fraction) {
    if (quiet) return;
    const int percent = static_cast<int>(fraction * 100.0);
    if (percent == last_percent && !tensor.empty()) return;
    last_percent = percent;
    std::fprintf(stderr, "\rsynth: %3d%% %-40s", percent, tensor.c_str());
    std::fflush(stderr);
  };

  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<cpu::ThreadPool> pool = std::make_unique<cpu::ThreadPool>(threads);
  const llm::SynthResult res = llm::synthesize_model(o, *pool);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!quiet) std::fprintf(stderr, "\n");
  std::printf(
      "wrote %s: %s preset, %s, %.1fM parameters, vocab %u, %zu tensors, %.1f MiB in %.1f s\n",
      o.output_path.c_str(), std::string(o.preset.name).c_str(),
      std::string(llm::llama_ftype_name(o.ftype)).c_str(), res.parameters / 1e6, res.n_vocab,
      res.tensors, res.file_bytes / 1048576.0, secs);
  return 0;
}

}  // namespace nvhcq::app
