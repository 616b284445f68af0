#pragma once
// The results of `nvhcq bench`: rows in llama-bench's shape (model, size,
// params, backend, test, tokens/s mean ± sd) printed as a markdown table, plus
// per-backend facts (load time, memory, bandwidth, the --profile breakdown),
// all written as one JSON document.

#include <cstdint>
#include <string>
#include <vector>

#include "llm/gpu/step_timeline.h"

namespace nvhcq::app {

struct BenchRow {
  std::string model;    // "llama 1.2B Q6_K"
  std::string file;
  uint64_t model_bytes = 0;
  uint64_t params = 0;
  std::string backend;  // nv, cuda, cpu
  std::string test;     // pp512, tg128
  int tokens = 0;
  std::vector<double> seconds;  // one per repetition
  // Decode only: weight bytes streamed per token and the device's measured
  // copy bandwidth (bytes read + written per second), 0 when unknown.
  uint64_t bytes_per_token = 0;
  double copy_bandwidth = 0.0;

  double mean_tps() const;
  double sd_tps() const;
};

struct ProfileEntry {
  std::string what;
  int launches = 0;
  double microseconds = 0.0;
};

// What was measured about one model on one backend besides the speed rows.
struct BenchSetup {
  std::string model, file, backend, device;
  double load_seconds = 0.0;
  uint64_t weight_bytes = 0, kv_bytes = 0, device_bytes = 0;  // GPU memory
  uint64_t host_peak_rss = 0;                                   // after load
  double copy_bandwidth = 0.0;
  size_t step_launches = 0;
  std::string decode;                 // "persistent" (one launch of phases) or "launches"
  std::vector<ProfileEntry> profile;  // per decode step
  std::vector<ProfileEntry> prefill_profile;  // per prefill pass of prefill_tokens
  int prefill_tokens = 0;
  double step_us = 0.0;               // a replayed decode step (tg), for the profile's gaps
  int profile_positions = 0;          // cache positions behind the profiled and traced steps
  llm::StepTimeline timeline;         // --timeline (empty classes: none)
};

void print_bench_table(const std::vector<BenchRow>& rows);
void print_bench_setup(const BenchSetup& setup);
void write_bench_json(const std::string& path, const std::vector<BenchRow>& rows,
                      const std::vector<BenchSetup>& setups);

}  // namespace nvhcq::app
