#pragma once
// What the accelerator benchmarks (matmul, bandwidth, elementwise, mlp) share:
// opening the backends named by --backend, compiling and loading kernels once
// per backend, GPU-timed runs, alternation in blocks, and the exit-code
// contract (0 ok, 1 a check or the GPU failed, 2 bad usage).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/args.h"
#include "base/error.h"
#include "gpu/accelerator.h"
#include "kernels/gemm_plan.h"
#include "support/report.h"

namespace nvhcq::bench {

// A result that disagrees with its CPU reference. main() reports it and exits 1.
class CheckFailure : public Error {
 public:
  using Error::Error;
};

struct Backend {
  std::string name;  // "nv" or "cuda"
  std::unique_ptr<gpu::Accelerator> acc;
};

// "nv,cuda" -> {"nv", "cuda"}; throws UsageError for anything else or duplicates.
std::vector<std::string> parse_backend_list(const std::string& list);
// Opens each backend, in order.
std::vector<Backend> open_backends(const std::string& list);
// Comma-separated positive integers, each with an optional suffix: k or M
// (x1000, x1000000), Ki, Mi or Gi (powers of two). "1M,10M,1Gi".
std::vector<uint64_t> parse_count_list(const std::string& list);
std::vector<std::string> split_list(const std::string& list);

// Compiles each kernel file once per architecture and loads each kernel once per
// accelerator, so both backends time the same CUBIN.
class KernelLoader {
 public:
  const gpu::Kernel& get(gpu::Accelerator& acc, const kernels::KernelLaunch& launch);
  const gpu::Kernel& get(gpu::Accelerator& acc, const std::string& file, const std::string& kernel,
                         const std::string& arch_suffix = "");

 private:
  std::map<std::string, std::vector<uint8_t>> cubins_;  // arch + "|" + file
  std::map<std::pair<const gpu::Accelerator*, std::string>, std::unique_ptr<gpu::Kernel>> loaded_;
};

gpu::LaunchDims dims_of(const kernels::KernelLaunch& launch);

// Milliseconds of GPU time per repetition of `body` (which queues work), over
// `reps` repetitions between two time points.
double gpu_ms_per_rep(gpu::Accelerator& acc, int reps, const std::function<void()>& body);

// Keeps the GPU busy with `body` for about `seconds` of GPU time: its clocks
// drop while the host prepares inputs and take about a second of load to come
// back, so a measurement right after host work would time a slow GPU.
void warm_up(gpu::Accelerator& acc, double seconds, const std::function<void()>& body);

// Repetitions so that one timed block takes about `target_ms`, from one
// calibration run of `body` (already warm), clamped to [1, max_reps].
int reps_for(gpu::Accelerator& acc, double target_ms, int max_reps,
             const std::function<void()>& body);

// "NVIDIA H200 (sm_90, 132 SMs)" and the backends, into the report's metadata.
void describe(Report& report, const std::vector<Backend>& backends);

// Runs one part of a benchmark (one size, say). An Error it throws -- a failed
// check, an allocation the GPU refuses, a fault -- is printed and added to
// `problems`, and the benchmark goes on with the next part, so the rows already
// measured are still printed and written. Returns false when it failed.
bool run_part(const std::string& what, std::vector<std::string>& problems,
              const std::function<void()>& part);
// Throws CheckFailure summing up `problems` (none: returns).
void fail_if_problems(const std::vector<std::string>& problems, const std::string& what);

// Runs a benchmark's body, printing failures: returns 0, 1 (CheckFailure, Error,
// other exceptions) or 2 (UsageError).
int guarded_main(const char* program, const std::function<int()>& body);
// A benchmark's main: parses argv with `parser` (--help prints the usage), then
// runs `run` under guarded_main.
int parse_and_run(const char* program, const ArgParser& parser, int argc, char** argv,
                  const std::function<int(const ArgParser::Result&)>& run);

// Bytes as "1 MiB", "256 MiB", "1 GiB"; counts as "1M", "10M", "256M".
std::string bytes_label(uint64_t bytes);
std::string count_label(uint64_t n);

}  // namespace nvhcq::bench
