// nvhcq quantize: converts a GGUF model to another file type with llama.cpp's
// quantization mixes (Q4_K_M keeps output and some attn_v/ffn_down in Q6_K, ...).

#include <chrono>
#include <cstdio>
#include <string>

#include <unistd.h>

#include "app/commands.h"
#include "app/thread_option.h"
#include "base/args.h"
#include "base/error.h"
#include "cpu/thread_pool.h"
#include "llm/synth/file_type_names.h"
#include "llm/synth/model_quantizer.h"

namespace nvhcq::app {

int run_quantize(const Args& args) {
  ArgParser parser("nvhcq quantize",
                   "Convert a GGUF model to another weight type with llama.cpp's mixes, copying\n"
                   "its metadata and setting general.file_type. Tensors already quantized are\n"
                   "converted through f32 (with a warning: that loses quality).");
  parser.option("threads", "N", "threads (default: all cores, or NVHCQ_THREADS)", "", 't')
      .flag("quiet", "no progress on stderr", 'q')
      .positional("IN.gguf", "the model to read")
      .positional("OUT.gguf", "the file to write")
      .positional("TYPE", "file type: " + llm::file_type_names());
  const auto r = parser.parse(args);
  if (r.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  const std::string type = *r.positional("TYPE");
  const auto ftype = llm::parse_file_type(type);
  if (!ftype)
    throw UsageError("unknown TYPE '" + type + "' (one of " + llm::file_type_names() + ")");
  int threads = thread_count_option(r);
  // Progress redraws one line: only worth it on a terminal.
  const bool quiet = r.flag("quiet") || !isatty(fileno(stderr));
  llm::QuantizeOptions o;
  o.ftype = *ftype;
  o.progress = [&](const std::string& name, llm::GgmlType from, llm::GgmlType to, double f) {
    if (quiet) return;
    std::fprintf(stderr, "\rquantize: %3d%% %-36s %6s -> %-6s", static_cast<int>(f * 100.0),
                 name.c_str(), std::string(llm::traits(from).name).c_str(),
                 std::string(llm::traits(to).name).c_str());
    std::fflush(stderr);
  };
  const auto t0 = std::chrono::steady_clock::now();
  cpu::ThreadPool pool(threads);
  const std::string in = *r.positional("IN.gguf"), out = *r.positional("OUT.gguf");
  const llm::QuantizeResult res = llm::quantize_model(in, out, o, pool);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!quiet) std::fprintf(stderr, "\n");
  if (res.requantized > 0) {
    std::fprintf(stderr,
                 "warning: %zu tensors were already quantized and lost quality in the conversion\n",
                 res.requantized);
  }
  std::printf("wrote %s (%s): %zu tensors, %zu converted, %.1f MiB -> %.1f MiB in %.1f s\n",
              out.c_str(), std::string(llm::llama_ftype_name(o.ftype)).c_str(), res.tensors,
              res.converted, res.input_bytes / 1048576.0, res.output_bytes / 1048576.0, secs);
  return 0;
}

}  // namespace nvhcq::app
