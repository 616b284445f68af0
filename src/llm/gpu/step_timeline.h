#pragma once
// Where the time of a self-ordered decode step goes, launch by launch, from the
// stamps its blocks wrote (kernels built with LLM_TRACE, kernels/llm_chain.cuh):
// each block's start, the end of its wait for the launches ahead, the end of
// its preparation and its end, in GPU nanoseconds.
//
// A launch of a self-ordered step can do nothing until every block of the
// launches ahead has finished ("ready"); its share of the step is the time from
// then to the end of its own last block (the critical block). The shares of a
// step's launches add up to the step, and a share splits exactly into the
// critical block's wait (ready until it was released: the wake-up, or a start
// delayed until an SM had room), its preparation and its work. The first
// block's wake-up, the last block's start and the median block's work say why.
// (An attention that takes tagged values from Q/K/V, kernels/llm_tagged.cuh,
// waits for those values only, and may be released before it is ready: its
// wait and wake-up are then negative.)

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/llm_jobs.cuh"

namespace nvhcq::llm {

using BlockStamps = std::array<uint64_t, LLM_STAMPS>;  // LLM_STAMP_START ... LLM_STAMP_DONE

struct TracedLaunch {
  std::string what;                 // its kernel class ("qkv", "attention", ...)
  std::vector<BlockStamps> blocks;  // in grid order
};

// Per kernel class, microseconds. `share` is per step (the class's launches
// summed); the others are averages over its launches.
struct TimelineClass {
  std::string what;
  int launches = 0;
  double share = 0.0;     // ready until its last block ended
  double wait = 0.0;      // the critical block: ready until released
  double prepare = 0.0;   //   released until prepared (0 where the kernel stamps no preparation)
  double work = 0.0;      //   prepared (or released) until its end
  double wake = 0.0;      // ready until the first block was released
  double late = 0.0;      // ready until the last block started; 0 when every block was waiting by then
  double median_work = 0.0;  // the median block's work (prepared or released until its end)
};

struct StepTimeline {
  double step = 0.0;  // µs: the first launch's release until the last launch's end (the shares' sum)
  std::vector<TimelineClass> classes;  // in the order they first appear in the step
};

// FormatError when a launch has no blocks or a block lacks its start, release
// or end stamp (kernels built without LLM_TRACE write none).
StepTimeline summarize_timeline(const std::vector<TracedLaunch>& launches);

// Every block's stamps as CSV, for what the summary averages away (how blocks
// start as the blocks ahead of them leave): a header line, then per block its
// launch's index and class, its index in the grid and its four stamps in ns
// from the earliest stamp of the step (0 where it wrote none).
void write_block_stamps(std::ostream& out, const std::vector<TracedLaunch>& launches);

// The mean of several steps' timelines, class by class (the same step traced
// again; classes matched by position).
StepTimeline average_timelines(const std::vector<StepTimeline>& steps);

}  // namespace nvhcq::llm
