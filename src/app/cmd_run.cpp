// nvhcq run: generates text with a GGUF model, streaming tokens to stdout as they
// come; load progress, the timing summary and (--verbose) details go to stderr.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include <unistd.h>

#include "app/commands.h"
#include "base/args.h"
#include "base/error.h"
#include "cpu/thread_pool.h"
#include "compile/nvrtc_api.h"
#include "cuda/cuda_accelerator.h"
#include "drv/probe.h"
#include "llm/gpu/gpu_decoder.h"
#include "llm/gpu/gpu_llama.h"
#include "llm/model/generator.h"
#include "llm/model/llama_model.h"
#include "llm/model/process_memory.h"
#include "llm/sampler/sampler.h"
#include "llm/tokenizer/tokenizer.h"

namespace nvhcq::app {
namespace {

double mib(uint64_t bytes) {
  return static_cast<double>(bytes) / 1048576.0;
}

ArgParser make_parser() {
  ArgParser p("nvhcq run",
              "Generate text with a GGUF model (llama, mistral, qwen2 architectures).");
  p.option("model", "FILE", "the GGUF model", "", 'm')
      .option("prompt", "TEXT", "the prompt (special-token text such as <|eot_id|> is parsed)", "",
              'p')
      .option("n-predict", "N", "tokens to generate (-1: until the context is full)", "128", 'n')
      .option("temp", "T", "temperature; 0 is greedy", "0.8")
      .option("top-k", "K", "keep the K most likely tokens (0: off)", "40")
      .option("top-p", "P", "keep the most likely tokens up to probability P (1: off)", "0.95")
      .option("min-p", "P", "drop tokens less likely than P times the best (0: off)", "0.05")
      .option("repeat-penalty", "R", "penalize the last --repeat-last-n tokens (1: off)", "1.0")
      .option("repeat-last-n", "N", "tokens the repetition penalty looks back on", "64")
      .option("seed", "S", "random seed of the sampler (default: a random one, printed)")
      .option("threads", "N", "CPU threads (default: all cores, or NVHCQ_THREADS)", "", 't')
      .option("ctx-size", "N",
              "context (KV cache) size (default: prompt + -n, within the trained context)", "", 'c')
      .option("backend", "NAME", "nv (nvhcq's direct GPU path), cuda, cpu, or auto: nv when a GPU is present", "auto")
      .flag("no-echo", "do not print the prompt before the generated text")
      .flag("verbose", "report the model, the sampler and resident memory", 'v');
  return p;
}

int positive_or(const ArgParser::Result& r, const std::string& name, int fallback, int min) {
  if (r.get(name).empty()) return fallback;
  const long long v = r.get_int(name);
  if (v < min || v > (1 << 30)) {
    throw UsageError("--" + name + " must be at least " + std::to_string(min));
  }
  return static_cast<int>(v);
}

// The backend to run on: auto is nv where the NVIDIA driver and NVRTC are
// present, cpu elsewhere.
std::string resolve_backend(const std::string& backend) {
  if (backend == "cpu" || backend == "nv" || backend == "cuda") return backend;
  if (backend != "auto") throw UsageError("--backend must be cpu, nv, cuda or auto, not '" + backend + "'");
  if (drv::probe_driver_nodes().has_rm() && compile::nvrtc_available()) return "nv";
  std::fprintf(stderr, "backend auto: no usable NVIDIA GPU here (driver nodes or NVRTC missing); using cpu\n");
  return "cpu";
}

}  // namespace

int run_run(const Args& args) {
  const ArgParser parser = make_parser();
  const auto r = parser.parse(args);
  if (r.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  const std::string path = r.get("model");
  if (path.empty()) throw UsageError("missing -m FILE\n\n" + parser.usage());
  if (!r.has("prompt") || r.get("prompt").empty())
    throw UsageError("missing -p PROMPT\n\n" + parser.usage());
  const std::string prompt = r.get("prompt");
  const std::string backend = resolve_backend(r.get("backend"));
  const bool verbose = r.flag("verbose");

  llm::SamplerParams sp;
  sp.temperature = static_cast<float>(r.get_double("temp"));
  sp.top_k = static_cast<int>(r.get_int("top-k"));
  sp.top_p = static_cast<float>(r.get_double("top-p"));
  sp.min_p = static_cast<float>(r.get_double("min-p"));
  sp.repeat_penalty = static_cast<float>(r.get_double("repeat-penalty"));
  sp.repeat_last_n = static_cast<int>(r.get_int("repeat-last-n"));
  if (r.get("seed").empty()) {
    sp.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  } else {
    const long long s = r.get_int("seed");
    if (s < 0) throw UsageError("--seed must not be negative");
    sp.seed = static_cast<uint64_t>(s);
  }
  sp.validate();
  const long long n_predict = r.get_int("n-predict");
  if (n_predict < -1 || n_predict > (1 << 30)) throw UsageError("-n must be -1 or more");
  const int threads = positive_or(r, "threads", cpu::default_thread_count(), 1);
  if (backend == "auto")
    std::fprintf(stderr, "backend auto: only the cpu backend is built yet; using cpu\n");

  const std::optional<llm::ProcessMemory> before = llm::read_process_memory();
  std::fprintf(stderr, "loading %s\n", path.c_str());
  std::unique_ptr<llm::LlamaModel> model = llm::LlamaModel::open(path);
  const llm::ModelConfig& cfg = model->config();
  const auto t_load = std::chrono::steady_clock::now();
  int last_percent = -1;
  const bool tty = isatty(fileno(stderr));
  auto progress = [&](const char* what) {
    return [&, what](double f) {
      if (!tty) return;
      const int percent = static_cast<int>(f * 100.0);
      if (percent == last_percent) return;
      last_percent = percent;
      std::fprintf(stderr, "\r%s: %3d%%", what, percent);
      std::fflush(stderr);
    };
  };
  const llm::Tokenizer tokenizer = llm::Tokenizer::from_gguf(model->file());
  const std::vector<int32_t> ids =
      tokenizer.encode(prompt, /*add_special=*/true, /*parse_special=*/true);
  if (ids.empty()) throw UsageError("the prompt gives no tokens");

  const int trained = static_cast<int>(std::min<uint32_t>(cfg.n_ctx_train, 1u << 30));
  const int wanted = n_predict < 0 ? trained : static_cast<int>(ids.size() + n_predict);
  const int ctx = positive_or(r, "ctx-size", std::min(std::max(wanted, 1), trained), 1);
  if (static_cast<int>(ids.size()) >= ctx) {
    throw UsageError("the prompt's " + std::to_string(ids.size()) +
                     " tokens do not fit a context of " + std::to_string(ctx) + " (--ctx-size)");
  }
  llm::Sampler sampler(sp);
  cpu::ThreadPool pool(threads);

  // The model on the chosen backend: on the CPU its file pages are read in
  // place; on a GPU they are streamed into device memory once.
  std::unique_ptr<llm::KvCache> cache;
  std::unique_ptr<gpu::Accelerator> acc;
  std::unique_ptr<llm::GpuLlama> gpu_model;
  std::unique_ptr<llm::Decoder> decoder;
  if (backend == "cpu") {
    model->prefetch(progress("loading weights"));
    cache = std::make_unique<llm::KvCache>(model->make_cache(ctx));
    decoder = std::make_unique<llm::CpuDecoder>(*model, *cache, pool);
  } else {
    try {
      acc = cuda::open_accelerator(backend);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + "\n(--backend " + backend + " needs an NVIDIA GPU; --backend cpu runs without one)");
    }
    llm::GpuLlamaOptions o;
    o.context = ctx;
    gpu_model = std::make_unique<llm::GpuLlama>(*model, *acc, pool, o, progress("uploading weights"));
    gpu_model->synchronize();
    decoder = std::make_unique<llm::GpuDecoder>(*gpu_model);
  }
  std::fprintf(stderr, "\rloaded %.1f MiB in %.2f s on %s: %s\n", mib(model->file().file_size()),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count(),
               acc ? (backend + " (" + acc->device_name() + ")").c_str() : "cpu", cfg.describe().c_str());
  if (verbose) {
    const uint64_t kv = cache ? cache->bytes() : gpu_model->kv_cache_bytes();
    std::fprintf(stderr, "prompt: %zu tokens; context %d; KV cache f16 %.1f MiB; %d threads; %s\n",
                 ids.size(), ctx, mib(kv), threads, sp.describe().c_str());
  }

  if (!r.flag("no-echo")) {
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fflush(stdout);
  }
  llm::GenerationOptions go;
  go.max_tokens = static_cast<int>(n_predict);
  go.is_end = [&](int32_t id) { return tokenizer.is_eog(id); };
  const llm::GenerationStats st = llm::generate(*decoder, sampler, ids, go, [&](int32_t id) {
    const std::string piece = tokenizer.token_to_piece(id);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::printf("\n");
  std::fflush(stdout);

  std::fprintf(stderr, "prompt:     %d tokens in %.3f s, %.1f tok/s\n", st.prompt_tokens,
               st.prompt_seconds, st.prompt_tokens_per_second());
  std::fprintf(
      stderr, "generation: %d tokens in %.3f s, %.1f tok/s (%d decode passes, %.1f ms each)\n",
      st.generated_tokens, st.decode_seconds, st.decode_tokens_per_second(), st.decode_passes,
      st.decode_passes > 0 ? 1000.0 * st.decode_seconds / st.decode_passes : 0.0);
  std::fprintf(stderr, "stopped by: %s; sampler: %s; %d threads, backend %s\n", st.stop_reason().c_str(),
               sp.describe().c_str(), threads, backend.c_str());
  if (verbose && gpu_model) {
    const uint64_t budget = gpu_model->weight_bytes() + gpu_model->kv_cache_bytes();
    std::fprintf(stderr, "GPU memory: %.1f MiB vs weights %.1f MiB + KV cache %.1f MiB: %+.1f%%\n",
                 mib(gpu_model->device_bytes()), mib(gpu_model->weight_bytes()), mib(gpu_model->kv_cache_bytes()),
                 100.0 * (static_cast<double>(gpu_model->device_bytes()) / static_cast<double>(budget) - 1.0));
  }
  if (verbose && cache) {
    const std::optional<llm::ProcessMemory> m = llm::read_process_memory();
    if (!m) {
      std::fprintf(stderr, "memory: /proc/self/status is not readable here\n");
    } else {
      const uint64_t budget = model->file().file_size() + cache->bytes();
      const double over = 100.0 * (static_cast<double>(m->rss) / static_cast<double>(budget) - 1.0);
      std::fprintf(
          stderr,
          "memory: resident %.1f MiB (file pages %.1f, anonymous %.1f; %.1f before loading) "
          "vs model file %.1f MiB + KV cache %.1f MiB = %.1f MiB: %+.1f%% (%s the +10%% bound)\n",
          mib(m->rss), mib(m->rss_file), mib(m->rss_anon), before ? mib(before->rss) : 0.0,
          mib(model->file().file_size()), mib(cache->bytes()), mib(budget), over,
          over <= 10.0 ? "within" : "beyond");
    }
  }
  return 0;
}

}  // namespace nvhcq::app
