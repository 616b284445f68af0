// GpuLlama::decode_timeline: a self-ordered decode step traced block by block
// (kernels built with LLM_TRACE stamp into the array the step state points to;
// step_timeline.h reads it).
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "base/error.h"
#include "llm/gpu/gpu_llama.h"
#include "llm/gpu/gpu_scratch.h"

namespace nvhcq::llm {

namespace {
// Steps replayed back to back per sample: the traced one (the last) starts
// while the one before it drains, as in generation.
constexpr int kTimelineRun = 3;
// How long the traced steps replay before the first sample. The GPU's clocks
// follow its load, and a sample is a few steps between host round trips: on
// the H200 a 1B model's first samples after its tests ran every launch 3-4x
// slower than its decode (docs/perf-notes.md).
constexpr int kTimelineWarmUpMs = 200;

// Stamp slots are laid out as StepChain counts blocks (LlmChainLink::after).
size_t step_blocks(const std::vector<StepLaunch>& step) {
  size_t n = 0;
  for (const StepLaunch& l : step) n += l.dims.blocks();
  return n;
}
}  // namespace

StepTimeline GpuLlama::decode_timeline(int samples) {
  if (!options_.trace_decode) throw UsageError("the decode timeline needs kernels built to trace (trace_decode)");
  if (persistent_ || !self_ordered_) throw UsageError("the decode timeline traces self-ordered decode steps only");
  if (samples < 1) throw UsageError("the decode timeline needs at least one sample");
  if (pos_ < 1 || pos_ + kTimelineRun > options_.context) {
    throw UsageError("the decode timeline runs steps after a prompt, within the context");
  }
  // (Room for the full step's blocks, the most a step has; a run replays the
  // step of its first position, the one-split step included.)
  const size_t bytes = step_blocks(step_) * sizeof(BlockStamps);
  if (!trace_) {
    trace_ = acc_.alloc(bytes);
    const uint64_t va = trace_->va();
    acc_.upload(*scratch_, s_->state - scratch_->va() + offsetof(LlmStepState, trace), &va, sizeof(va));
  }
  // Zero, so that what a kernel does not stamp (its preparation) reads 0.
  const std::vector<uint8_t> zeros(bytes, 0);
  acc_.upload(*trace_, 0, zeros.data(), bytes);

  int32_t token = 0;
  acc_.download(&token, *scratch_, s_->history - scratch_->va() + 4ull * (pos_ - 1), 4);
  // One run of kTimelineRun steps from the same token and position.
  auto run = [&] {
    write_state(token, pos_);
    for (int r = 0; r < kTimelineRun; ++r) acc_.replay(graph_at(pos_));
    acc_.synchronize();
  };
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimelineWarmUpMs);
  while (std::chrono::steady_clock::now() < warm_until) run();
  std::vector<StepTimeline> steps;
  // NVHCQ_TIMELINE_BLOCKS=FILE: the last sample's stamps, block by block.
  const char* blocks_file = std::getenv("NVHCQ_TIMELINE_BLOCKS");
  for (int i = 0; i < samples; ++i) {
    run();
    const std::vector<TracedLaunch> launches = download_timeline();
    steps.push_back(summarize_timeline(launches));
    if (i + 1 == samples && blocks_file != nullptr && *blocks_file) {
      std::ofstream f(blocks_file);
      if (!f) throw Error(std::string("cannot write the block stamps to '") + blocks_file + "'");
      write_block_stamps(f, launches);
    }
  }
  return average_timelines(steps);
}

std::vector<TracedLaunch> GpuLlama::download_timeline() {
  const std::vector<StepLaunch>& step = step_at(pos_);
  std::vector<BlockStamps> stamps(step_blocks(step));
  acc_.download(stamps.data(), *trace_, 0, stamps.size() * sizeof(BlockStamps));
  std::vector<TracedLaunch> out;
  size_t first = 0;
  for (const StepLaunch& l : step) {
    const size_t n = l.dims.blocks();
    out.push_back(TracedLaunch{l.what, std::vector<BlockStamps>(stamps.begin() + first, stamps.begin() + first + n)});
    first += n;
  }
  return out;
}

}  // namespace nvhcq::llm
