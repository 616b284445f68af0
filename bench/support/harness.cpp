#include "support/harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "compile/compiler.h"
#include "cuda/cuda_accelerator.h"

namespace nvhcq::bench {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> parse_backend_list(const std::string& list) {
  std::vector<std::string> out;
  for (const auto& b : split_list(list)) {
    if (b != "nv" && b != "cuda")
      throw UsageError("unknown backend '" + b + "' (nv, cuda or nv,cuda)");
    if (std::find(out.begin(), out.end(), b) != out.end())
      throw UsageError("backend '" + b + "' named twice");
    out.push_back(b);
  }
  if (out.empty()) throw UsageError("--backend names no backend (nv, cuda or nv,cuda)");
  return out;
}

std::vector<Backend> open_backends(const std::string& list) {
  std::vector<Backend> out;
  for (const auto& name : parse_backend_list(list)) {
    try {
      out.push_back(Backend{name, cuda::open_accelerator(name)});
    } catch (const Error& e) {
      throw Error("cannot open the " + name + " backend: " + e.what());
    }
  }
  return out;
}

std::vector<uint64_t> parse_count_list(const std::string& list) {
  std::vector<uint64_t> out;
  for (const auto& item : split_list(list)) {
    size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (const std::exception&) {
      throw UsageError("'" + item + "' is not a count");
    }
    std::string suffix = item.substr(used);
    if (suffix == "k" || suffix == "K") {
      v *= 1000;
    } else if (suffix == "M") {
      v *= 1000000;
    } else if (suffix == "Ki") {
      v <<= 10;
    } else if (suffix == "Mi") {
      v <<= 20;
    } else if (suffix == "Gi") {
      v <<= 30;
    } else if (!suffix.empty()) {
      throw UsageError("'" + item + "': unknown suffix (k, M, Ki, Mi, Gi)");
    }
    if (v == 0) throw UsageError("'" + item + "' must be positive");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError("empty list");
  return out;
}

const gpu::Kernel& KernelLoader::get(gpu::Accelerator& acc, const std::string& file,
                                     const std::string& kernel, const std::string& arch_suffix) {
  std::string arch = acc.arch() + arch_suffix;
  std::string id = arch + "|" + file + "|" + kernel;
  auto key = std::make_pair(static_cast<const gpu::Accelerator*>(&acc), id);
  if (auto it = loaded_.find(key); it != loaded_.end()) return *it->second;
  std::string cubin_key = arch + "|" + file;
  auto c = cubins_.find(cubin_key);
  if (c == cubins_.end()) {
    compile::CompileOptions o;
    o.arch = arch;
    c = cubins_.emplace(cubin_key, compile::compile_embedded(file, o).cubin).first;
  }
  auto loaded = acc.load(c->second, kernel);
  return *loaded_.emplace(key, std::move(loaded)).first->second;
}

const gpu::Kernel& KernelLoader::get(gpu::Accelerator& acc, const kernels::KernelLaunch& launch) {
  return get(acc, launch.file, launch.kernel, launch.arch_suffix);
}

gpu::LaunchDims dims_of(const kernels::KernelLaunch& l) {
  gpu::LaunchDims d;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = l.grid[i];
    d.block[i] = l.block[i];
  }
  d.dynamic_shared_bytes = l.shared_bytes;
  return d;
}

double gpu_ms_per_rep(gpu::Accelerator& acc, int reps, const std::function<void()>& body) {
  gpu::TimePoint t0 = acc.record_time();
  for (int i = 0; i < reps; ++i) body();
  gpu::TimePoint t1 = acc.record_time();
  acc.synchronize();
  return acc.elapsed_ms(t0, t1) / std::max(reps, 1);
}

void warm_up(gpu::Accelerator& acc, double seconds, const std::function<void()>& body) {
  double spent_ms = 0;
  // Blocks of at most 256 repetitions: one block's work goes out in one submission.
  for (int reps = 1; spent_ms < seconds * 1e3; reps = std::min(reps * 2, 256)) {
    spent_ms += gpu_ms_per_rep(acc, reps, body) * reps;
  }
}

int reps_for(gpu::Accelerator& acc, double target_ms, int max_reps,
             const std::function<void()>& body) {
  double one = gpu_ms_per_rep(acc, 1, body);
  if (!(one > 0)) return max_reps;
  return static_cast<int>(
      std::clamp(std::ceil(target_ms / one), 1.0, static_cast<double>(max_reps)));
}

void describe(Report& report, const std::vector<Backend>& backends) {
  if (backends.empty()) return;
  const auto& a = *backends.front().acc;
  report.set_meta(
      "device", a.device_name() + " (" + a.arch() + ", " + std::to_string(a.sm_count()) + " SMs)");
  std::string names;
  for (const auto& b : backends) names += (names.empty() ? "" : ",") + b.name;
  report.set_meta("backends", names);
}

bool run_part(const std::string& what, std::vector<std::string>& problems,
              const std::function<void()>& part) {
  try {
    part();
    return true;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    problems.push_back(what + ": " + e.what());
    std::fprintf(stderr, "FAILED: %s\n", problems.back().c_str());
    return false;
  }
}

void fail_if_problems(const std::vector<std::string>& problems, const std::string& what) {
  if (problems.empty()) return;
  std::string text =
      std::to_string(problems.size()) + " " + what + " failed; first: " + problems.front();
  throw CheckFailure(text);
}

int guarded_main(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const CheckFailure& e) {
    std::fprintf(stderr, "%s: CHECK FAILED: %s\n", program, e.what());
    return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    if (!e.hint().empty()) std::fprintf(stderr, "hint: %s\n", e.hint().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

int parse_and_run(const char* program, const ArgParser& parser, int argc, char** argv,
                  const std::function<int(const ArgParser::Result&)>& run) {
  return guarded_main(program, [&] {
    auto args = parser.parse(std::vector<std::string>(argv + 1, argv + argc));
    if (args.help_requested()) {
      std::printf("%s", parser.usage().c_str());
      return 0;
    }
    return run(args);
  });
}

std::string bytes_label(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string count_label(uint64_t n) {
  if (n >= 1000000 && n % 1000000 == 0) return std::to_string(n / 1000000) + "M";
  if (n >= 1000 && n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

}  // namespace nvhcq::bench
