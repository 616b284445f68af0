// nvhcq bench: prompt processing (pp) and generation (tg) speed of GGUF models
// on each backend, llama-bench style: tests run on an empty context, each
// repeated -r times after a warm-up, reported as tokens/s mean ± sd. Generation
// runs greedy on the GPU (tokens never leave it), as llama-bench's tg does not
// sample on the host either.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/bench_table.h"
#include "app/commands.h"
#include "app/thread_option.h"
#include "base/args.h"
#include "base/error.h"
#include "cpu/thread_pool.h"
#include "cuda/cuda_accelerator.h"
#include "drv/probe.h"
#include "llm/gpu/gpu_llama.h"
#include "llm/model/llama_model.h"
#include "llm/quant/ftype_mix.h"

namespace nvhcq::app {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<int> int_list(const std::string& s, const std::string& option) {
  std::vector<int> out;
  for (const std::string& item : split_list(s)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || v < 0 || v > (1 << 20)) {
      throw UsageError("--" + option + " takes token counts (0 or more), not '" + item + "'");
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// Peak resident memory of the process (VmHWM), 0 where unreadable.
uint64_t peak_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string model_label(const llm::LlamaModel& m, uint64_t params) {
  const llm::ModelConfig& c = m.config();
  char size[32];
  std::snprintf(size, sizeof(size), "%.1fB", static_cast<double>(params) / 1e9);
  std::string type = "?";
  if (auto id = m.file().metadata().find_u32("general.file_type")) {
    if (auto ft = llm::llama_ftype_from_id(*id)) type = std::string(llm::llama_ftype_name(*ft));
  }
  return c.arch_name + " " + size + " " + type;
}

// Tokens for the tests: ids spread over the vocabulary (speed does not depend on them).
std::vector<int32_t> test_tokens(int n, uint32_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    t[static_cast<size_t>(i)] = static_cast<int32_t>((7919ull * (i + 1)) % vocab);
  return t;
}

// Read + write bytes per second of a 1 GiB device-to-device copy (median of 5).
double copy_bandwidth(gpu::Accelerator& acc) {
  const size_t bytes = 1ull << 30;
  auto a = acc.alloc(bytes), b = acc.alloc(bytes);
  std::vector<double> ms;
  for (int i = 0; i < 6; ++i) {
    gpu::TimePoint t0 = acc.record_time();
    acc.copy(b->va(), a->va(), bytes);
    gpu::TimePoint t1 = acc.record_time();
    acc.synchronize();
    if (i > 0) ms.push_back(acc.elapsed_ms(t0, t1));
  }
  std::sort(ms.begin(), ms.end());
  return 2.0 * bytes / (ms[ms.size() / 2] / 1e3);
}

// The cache positions behind the decode step that --profile and --timeline
// take apart: as many as mid-way through tg128.
constexpr int kProfilePositions = 64;

struct Plan {
  std::vector<int> prompts, gens;
  int reps = 3;
  bool profile = false;
  bool timeline = false;  // --timeline: traced kernels, self-ordered decode
  int threads = 0;
  bool persistent = false;  // --decode persistent (else launches)
  int context = 0;          // --ctx-size (0: the smallest that holds every test)
};

// The KV cache's positions: --ctx-size, or the fewest that hold every test
// (and, on a GPU, the profiled and the traced steps' prompt).
int bench_context(const Plan& plan, bool gpu) {
  int needed = 1;
  for (int p : plan.prompts) needed = std::max(needed, p + 1);
  for (int n : plan.gens) needed = std::max(needed, n + 2);
  if (gpu && (plan.profile || plan.timeline)) needed = std::max(needed, kProfilePositions + 8);
  if (plan.context == 0) return needed;
  if (plan.context < needed) {
    throw UsageError("--ctx-size " + std::to_string(plan.context) + " is too small for these tests: they need " +
                     std::to_string(needed) + " positions");
  }
  return plan.context;
}

void bench_gpu(const std::string& backend, const std::string& file, llm::LlamaModel& model,
               const Plan& plan, BenchRow base, std::vector<BenchRow>& rows,
               std::vector<BenchSetup>& setups) {
  auto acc = cuda::open_accelerator(backend);
  cpu::ThreadPool pool(plan.threads);
  BenchSetup setup;
  setup.model = base.model;
  setup.file = file;
  setup.backend = backend;
  setup.device = acc->device_name();

  const int context = bench_context(plan, true);
  llm::GpuLlamaOptions o;
  o.context = context;
  o.persistent_decode = plan.persistent;
  if (plan.timeline) {
    o.trace_decode = true;
    o.self_ordered_decode = "on";
  }
  const auto t_load = Clock::now();
  const bool tty = isatty(fileno(stderr));
  llm::GpuLlama gpu(model, *acc, pool, o, [&](double f) {
    if (tty)
      std::fprintf(stderr, "\ruploading %s to %s: %3d%%", base.model.c_str(), backend.c_str(),
                   static_cast<int>(100 * f));
  });
  gpu.synchronize();
  setup.load_seconds = since(t_load);
  if (tty) std::fprintf(stderr, "\r");
  setup.weight_bytes = gpu.weight_bytes();
  setup.kv_bytes = gpu.kv_cache_bytes();
  setup.device_bytes = gpu.device_bytes();
  setup.host_peak_rss = peak_rss();
  setup.step_launches = gpu.step_launches();
  setup.decode = gpu.persistent_decode()     ? "persistent"
                 : gpu.self_ordered_decode() ? (plan.timeline ? "self-ordered launches, traced" : "self-ordered launches")
                                             : "launches";
  if (plan.persistent && !gpu.persistent_decode()) {
    std::fprintf(stderr, "%s on %s: decode takes separate launches (%s)\n", base.model.c_str(), backend.c_str(),
                 gpu.persistent_refusal().c_str());
  }

  const uint32_t vocab = model.config().n_vocab;
  // The GPU's clocks follow its load: a second of decode steps first, so that
  // neither the copy bandwidth nor the first test is measured on an idle chip.
  for (const auto t0 = Clock::now(); since(t0) < 1.0;) {
    gpu.reset();
    gpu.generate_greedy(test_tokens(1, vocab)[0], std::min(64, context - 1));
  }
  setup.copy_bandwidth = copy_bandwidth(*acc);
  for (int p : plan.prompts) {
    if (p == 0) continue;
    const auto tokens = test_tokens(p, vocab);
    BenchRow row = base;
    row.backend = backend;
    row.test = "pp" + std::to_string(p);
    row.tokens = p;
    for (int r = -1; r < plan.reps; ++r) {
      gpu.reset();
      const auto t0 = Clock::now();
      gpu.forward(tokens);
      gpu.synchronize();
      if (r >= 0) row.seconds.push_back(since(t0));
    }
    rows.push_back(row);
  }
  for (int n : plan.gens) {
    if (n == 0) continue;
    BenchRow row = base;
    row.backend = backend;
    row.test = "tg" + std::to_string(n);
    row.tokens = n;
    row.bytes_per_token = gpu.decode_weight_bytes();
    row.copy_bandwidth = setup.copy_bandwidth;
    for (int r = -1; r < plan.reps; ++r) {
      gpu.reset();
      const auto t0 = Clock::now();
      gpu.generate_greedy(test_tokens(1, vocab)[0], n);  // returns after the last step
      if (r >= 0) row.seconds.push_back(since(t0));
    }
    setup.step_us = 1e6 / row.mean_tps();
    rows.push_back(row);
  }
  setup.profile_positions = kProfilePositions;
  // The profiled and the traced steps decode after the same prompt (the
  // prefill profile in between leaves its own positions in the cache).
  auto prompt_for_profile = [&] {
    gpu.reset();
    gpu.forward(test_tokens(kProfilePositions, vocab));
  };
  if (plan.profile) {
    prompt_for_profile();
    for (const llm::KernelClassTime& k : gpu.profile_decode(20)) {
      setup.profile.push_back(ProfileEntry{k.what, k.launches, k.microseconds});
    }
    for (int p : plan.prompts) setup.prefill_tokens = std::max(setup.prefill_tokens, p);
    gpu.reset();
    for (const llm::KernelClassTime& k : gpu.profile_prefill(setup.prefill_tokens)) {
      setup.prefill_profile.push_back(ProfileEntry{k.what, k.launches, k.microseconds});
    }
  }
  if (plan.timeline) {
    prompt_for_profile();
    setup.timeline = gpu.decode_timeline(20);
  }
  print_bench_setup(setup);
  setups.push_back(setup);
}

void bench_cpu(const std::string& file, llm::LlamaModel& model, const Plan& plan, BenchRow base,
               std::vector<BenchRow>& rows, std::vector<BenchSetup>& setups) {
  cpu::ThreadPool pool(plan.threads);
  BenchSetup setup;
  setup.model = base.model;
  setup.file = file;
  setup.backend = "cpu";
  setup.device = std::to_string(pool.size()) + " threads";
  const auto t_load = Clock::now();
  model.prefetch();
  setup.load_seconds = since(t_load);
  llm::KvCache cache = model.make_cache(bench_context(plan, false));
  setup.kv_bytes = cache.bytes();
  const uint32_t vocab = model.config().n_vocab;
  std::vector<float> logits;
  for (int p : plan.prompts) {
    if (p == 0) continue;
    BenchRow row = base;
    row.backend = "cpu";
    row.test = "pp" + std::to_string(p);
    row.tokens = p;
    for (int r = -1; r < plan.reps; ++r) {
      cache.clear();
      const auto t0 = Clock::now();
      model.forward(test_tokens(p, vocab), cache, pool, logits);
      if (r >= 0) row.seconds.push_back(since(t0));
    }
    rows.push_back(row);
  }
  for (int n : plan.gens) {
    if (n == 0) continue;
    BenchRow row = base;
    row.backend = "cpu";
    row.test = "tg" + std::to_string(n);
    row.tokens = n;
    for (int r = -1; r < plan.reps; ++r) {
      cache.clear();
      int32_t token = test_tokens(1, vocab)[0];
      const auto t0 = Clock::now();
      for (int i = 0; i < n; ++i) {
        model.forward(std::vector<int32_t>{token}, cache, pool, logits);
        token =
            static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      }
      if (r >= 0) row.seconds.push_back(since(t0));
    }
    rows.push_back(row);
  }
  setup.host_peak_rss = peak_rss();
  print_bench_setup(setup);
  setups.push_back(setup);
}

ArgParser make_parser() {
  ArgParser p("nvhcq bench",
              "Measure prompt processing (pp) and generation (tg) speed, llama-bench style.");
  p.option("model", "FILE[,FILE...]", "GGUF models", "", 'm')
      .option("n-prompt", "N[,N...]", "prompt lengths (0: no pp test)", "512", 'p')
      .option("n-gen", "N[,N...]", "tokens to generate (0: no tg test)", "128", 'n')
      .option("repetitions", "R", "timed runs per test (after one warm-up)", "3", 'r')
      .option("backend", "NAME[,NAME...]", "nv, cuda, cpu or auto (nv when a GPU is present)",
              "auto")
      .option("threads", "N", "CPU threads (cpu backend, weight repacking)", "", 't')
      .option("ctx-size", "N", "KV cache positions (default: the fewest that hold the tests)", "", 'c')
      .option("json", "PATH", "also write the results as JSON")
      .option("decode", "MODE",
              "GPU decode step: launches (one per fused kernel) or persistent (one launch, sm_90 and newer)",
              "launches")
      .flag("profile",
            "time one decode step kernel by kernel and print the breakdown by kernel class")
      .flag("timeline",
            "GPU: trace the blocks of self-ordered decode steps (kernels built to stamp their times, all tests "
            "then run on them) and print where a step's time goes, by kernel class");
  return p;
}

}  // namespace

int run_bench(const Args& args) {
  const ArgParser parser = make_parser();
  const auto r = parser.parse(args);
  if (r.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  const std::vector<std::string> files = split_list(r.get("model"));
  if (files.empty()) throw UsageError("missing -m FILE\n\n" + parser.usage());
  Plan plan;
  plan.prompts = int_list(r.get("n-prompt"), "n-prompt");
  plan.gens = int_list(r.get("n-gen"), "n-gen");
  plan.reps = static_cast<int>(r.get_int("repetitions"));
  if (plan.reps < 1 || plan.reps > 1000) throw UsageError("--repetitions must be 1 to 1000");
  plan.profile = r.flag("profile");
  plan.timeline = r.flag("timeline");
  plan.threads = thread_count_option(r);
  if (!r.get("ctx-size").empty()) {
    const int64_t c = r.get_int("ctx-size");
    if (c < 1 || c > (1 << 20)) throw UsageError("--ctx-size must be 1 to 1048576");
    plan.context = static_cast<int>(c);
  }
  const std::string decode = r.get("decode");
  if (decode != "persistent" && decode != "launches") {
    throw UsageError("--decode takes persistent or launches, not '" + decode + "'");
  }
  plan.persistent = decode == "persistent";
  if (plan.persistent && plan.timeline) throw UsageError("--timeline traces separate launches, not --decode persistent");
  std::vector<std::string> backends;
  for (const std::string& b : split_list(r.get("backend"))) {
    if (b == "auto") {
      backends.push_back(drv::probe_driver_nodes().has_rm() ? "nv" : "cpu");
    } else if (b == "nv" || b == "cuda" || b == "cpu") {
      backends.push_back(b);
    } else {
      throw UsageError("--backend takes nv, cuda, cpu or auto, not '" + b + "'");
    }
  }
  if (backends.empty()) throw UsageError("--backend names no backend");

  std::vector<BenchRow> rows;
  std::vector<BenchSetup> setups;
  // Backend by backend, every model on one before the next: a direct-path (nv)
  // device opened after a CUDA context of the same process was closed has been
  // seen to stall on the H200 (docs/perf-notes.md), so nv goes first.
  std::stable_sort(
      backends.begin(), backends.end(),
      [](const std::string& a, const std::string& b) { return a == "nv" && b != "nv"; });
  std::vector<std::unique_ptr<llm::LlamaModel>> models;
  std::vector<BenchRow> bases;
  for (const std::string& file : files) {
    models.push_back(llm::LlamaModel::open(file));
    BenchRow base;
    base.file = file;
    for (const auto& t : models.back()->file().tensors()) {
      base.params += t.n_elements;
      base.model_bytes += t.n_bytes;
    }
    base.model = model_label(*models.back(), base.params);
    bases.push_back(base);
  }
  for (const std::string& backend : backends) {
    for (size_t i = 0; i < files.size(); ++i) {
      if (backend == "cpu") {
        bench_cpu(files[i], *models[i], plan, bases[i], rows, setups);
      } else {
        bench_gpu(backend, files[i], *models[i], plan, bases[i], rows, setups);
      }
    }
  }
  print_bench_table(rows);
  write_bench_json(r.get("json"), rows, setups);
  return 0;
}

}  // namespace nvhcq::app
