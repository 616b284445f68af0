// The decode step a loaded model keeps, chosen by timing the candidates on the
// GPU: the self-ordered step on each of several scratch allocations and, for
// self_ordered_decode "auto", the stream-ordered step.
//
// Why several scratches: a self-ordered step's blocks all poll one counter in
// the step state and read the same few vectors (the residual, the hand-offs)
// at the same moments, and how fast that goes depends on where those lines
// land in the GPU's memory. On the H200, moving the scratch by a few KiB moved
// 8B Q4_K_M decode between 589 and 598 tok/s, and the step state alone between
// 595 and 598, in no order a layout rule could follow (docs/perf-notes.md).
// Each candidate is an allocation of its own, with its own state and tagged
// values, so the chain's count of one never meets the tags of another.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/median.h"
#include "llm/gpu/gpu_llama.h"
#include "llm/gpu/gpu_scratch.h"

namespace nvhcq::llm {
namespace {

// How long the choice keeps the GPU busy before it times anything: about a
// second of load from idle raises the clocks (docs/perf-notes.md); with four
// rounds only (~30 ms), the first model of a process still picked stream order
// on a cold H200.
constexpr int kChoiceWarmUpMs = 300;
// Rounds it then times, every candidate once a round.
constexpr int kChoiceRounds = 6;
// How long a candidate's round lasts, about: the steps it replays from
// position 0 are as many as fit, 2 to kChoiceReplays, as the warm-up timed
// them. Eight steps of 8B Q4_K_M fit (1.7 ms each on the H200), four of 8B
// F16 (3.8 ms), which halves that model's timed rounds (nine candidates: 1.7
// s of its load at eight). A round is about as precise either way: it is
// about as long.
constexpr double kChoiceRoundMs = 16.0;
constexpr int kChoiceReplays = 8;
// Steps a candidate replays in a round of the warm-up.
constexpr int kWarmUpReplays = 2;

}  // namespace

std::unique_ptr<gpu::DeviceMemory> GpuLlama::allocate_decode_scratch(Scratch& s, const std::vector<float>& rope_table,
                                                                     size_t rope_floats) {
  auto mem = s.allocate_decode(acc_, config_, options_.context, splits_);
  s.upload_rope(acc_, *mem, rope_table, rope_floats);
  return mem;
}

void GpuLlama::choose_decode_step(const std::vector<float>& rope_table) {
  // Steps from position 0 of a cache nothing has used yet: the rows they
  // append are written again before anything reads them.
  const int most_replays = std::min(kChoiceReplays, options_.context - 1);
  const bool with_stream_order = options_.self_ordered_decode == "auto";
  const size_t n = 1 + (self_ordered_ ? options_.decode_scratches - 1 : 0) + (with_stream_order ? 1 : 0);
  if (most_replays < 1 || n < 2) return;

  // A candidate's step, and its step of one attention split where short
  // contexts have one (has_one_split_step): the steps from position 0 that
  // are timed run on that one.
  struct Candidate {
    Scratch s;
    size_t scratch;  // its allocation in `scratches` (the stream-ordered step shares the first)
    bool self_ordered;
    std::vector<StepLaunch> launches, short_launches;
    std::unique_ptr<gpu::Graph> graph, short_graph;
    gpu::Graph& timed() const { return short_graph ? *short_graph : *graph; }
  };
  auto candidate = [&](size_t scratch, bool self_ordered) {
    Candidate c{*s_, scratch, self_ordered, decode_launches(self_ordered), {}, nullptr, nullptr};
    c.graph = capture(c.launches);
    if (has_one_split_step()) {
      c.short_launches = decode_launches(self_ordered, 1);
      c.short_graph = capture(c.short_launches);
    }
    return c;
  };
  std::vector<std::unique_ptr<gpu::DeviceMemory>> scratches;
  scratches.push_back(std::move(scratch_));
  std::vector<Candidate> candidates;
  candidates.push_back({*s_, 0, self_ordered_, std::move(step_), std::move(short_step_), std::move(graph_),
                        std::move(short_graph_)});
  const Scratch first = *s_;
  if (self_ordered_) {
    // Each with the RoPE table's rows of the positions it is timed at; the
    // one kept gets the rest (at long contexts the table is tens of MB).
    const size_t timed_rope = static_cast<size_t>(most_replays) * config_.n_rot;
    for (int k = 1; k < options_.decode_scratches; ++k) {
      scratches.push_back(allocate_decode_scratch(*s_, rope_table, timed_rope));  // (decode_launches reads s_)
      candidates.push_back(candidate(scratches.size() - 1, true));
    }
    *s_ = first;
  }
  if (with_stream_order) candidates.push_back(candidate(0, false));

  // The GPU time of `replays` steps of candidate i.
  auto time_ms = [&](size_t i, int replays) {
    const Candidate& c = candidates[i];
    write_state_at(*scratches[c.scratch], c.s.state, 0, 0);
    const gpu::TimePoint t0 = acc_.record_time();
    for (int r = 0; r < replays; ++r) acc_.replay(c.timed());
    const gpu::TimePoint t1 = acc_.record_time();
    acc_.synchronize();
    return acc_.elapsed_ms(t0, t1);
  };
  // Warm-up: every candidate twice at least; its last round sizes the rounds.
  const int warm_replays = std::min(kWarmUpReplays, most_replays);
  std::vector<double> warm_ms(n);
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kChoiceWarmUpMs);
  for (size_t i = 0; i < 2 * n || i % n != 0 || std::chrono::steady_clock::now() < warm_until; ++i) {
    warm_ms[i % n] = time_ms(i % n, warm_replays);
  }
  const double step_ms = median(warm_ms) / warm_replays;
  const double fit = step_ms > 0 ? std::min<double>(kChoiceRoundMs / step_ms, most_replays) : most_replays;
  const int replays = std::clamp(static_cast<int>(fit), std::min(2, most_replays), most_replays);
  // Each candidate's median round: one disturbed round (a clock step, another
  // process) does not decide. The order turns, and every other round runs
  // backwards (A B C, C B A, B C A, B A C, ...): a steady drift of the clocks
  // favours no candidate.
  std::vector<std::vector<double>> ms(n);
  for (int round = 0; round < kChoiceRounds; ++round) {
    for (size_t j = 0; j < n; ++j) {
      const size_t turned = (j + static_cast<size_t>(round / 2)) % n;
      const size_t i = round % 2 == 0 ? turned : n - 1 - turned;
      ms[i].push_back(time_ms(i, replays));
    }
  }
  size_t best = 0;
  std::string report;
  for (size_t i = 0; i < n; ++i) {
    if (median(ms[i]) < median(ms[best])) best = i;
    char us[32];
    std::snprintf(us, sizeof us, "%.1f us", median(ms[i]) / replays * 1e3);
    report += (i ? ", " : "") + std::string(us) + (candidates[i].self_ordered ? "" : " (stream order)");
  }
  log::info("decode step candidates (", replays, " steps a round): ", report, "; kept ", best);

  Candidate& kept = candidates[best];
  *s_ = kept.s;
  scratch_ = std::move(scratches[kept.scratch]);
  if (kept.scratch != 0) s_->upload_rope(acc_, *scratch_, rope_table);
  step_ = std::move(kept.launches);
  graph_ = std::move(kept.graph);
  short_step_ = std::move(kept.short_launches);
  short_graph_ = std::move(kept.short_graph);
  self_ordered_ = kept.self_ordered;
  // (The other candidates' graphs and scratches go with `candidates`: every
  // replay has completed.)
}

}  // namespace nvhcq::llm
