#include "llm/gpu/step_timeline.h"

#include <algorithm>
#include <array>
#include <map>

#include "base/error.h"
#include "base/median.h"

namespace nvhcq::llm {

namespace {

double us(double ns) { return ns / 1000.0; }

// A class's figures that are means over its launches (all but the share).
template <class Class>  // TimelineClass or const TimelineClass
auto per_launch(Class& c) {
  return std::array{&c.wait, &c.prepare, &c.work, &c.wake, &c.late, &c.median_work};
}

// Where a block's work begins: its preparation's end, or its release when the
// kernel stamps no preparation.
double work_start(const BlockStamps& s) {
  return static_cast<double>(s[LLM_STAMP_PREPARED] ? s[LLM_STAMP_PREPARED] : s[LLM_STAMP_RELEASED]);
}

// Whether a block stamped nothing: it left at once, or its kernel was built
// without LLM_TRACE.
bool blank(const BlockStamps& s) { return s == BlockStamps{}; }

// Whether no block of the launch stamped anything.
bool unstamped(const TracedLaunch& launch) { return std::all_of(launch.blocks.begin(), launch.blocks.end(), blank); }

}  // namespace

StepTimeline summarize_timeline(const std::vector<TracedLaunch>& launches) {
  StepTimeline out;
  if (launches.empty()) return out;
  std::map<std::string, size_t> index;
  double ready = 0.0, first_release = 0.0;  // ns
  for (size_t l = 0; l < launches.size(); ++l) {
    const TracedLaunch& launch = launches[l];
    if (launch.blocks.empty()) throw FormatError("timeline: launch " + std::to_string(l) + " has no blocks");
    double last_start = 0.0, first_released = 0.0;
    size_t critical = 0;
    std::vector<double> work;
    const bool traced = !unstamped(launch);
    for (size_t b = 0; b < launch.blocks.size(); ++b) {
      const BlockStamps& s = launch.blocks[b];
      // A block with nothing to do may leave at once, unstamped, where another
      // block of its launch counts it (kernels/llm_chain.cuh): left out.
      if (traced && blank(s)) continue;
      if (s[LLM_STAMP_START] == 0 || s[LLM_STAMP_RELEASED] == 0 || s[LLM_STAMP_DONE] == 0) {
        throw FormatError("timeline: block " + std::to_string(b) + " of launch " + std::to_string(l) + " (" +
                          launch.what + ") wrote no stamps (kernels built without LLM_TRACE?)");
      }
      const auto start = static_cast<double>(s[LLM_STAMP_START]);
      const auto released = static_cast<double>(s[LLM_STAMP_RELEASED]);
      const bool first = work.empty();
      last_start = first ? start : std::max(last_start, start);
      first_released = first ? released : std::min(first_released, released);
      if (first || s[LLM_STAMP_DONE] > launch.blocks[critical][LLM_STAMP_DONE]) critical = b;
      work.push_back(static_cast<double>(s[LLM_STAMP_DONE]) - work_start(s));
    }
    // The first launch waits for nothing: the step begins at its release.
    if (l == 0) ready = first_release = first_released;
    const BlockStamps& crit = launch.blocks[critical];
    const auto released = static_cast<double>(crit[LLM_STAMP_RELEASED]);
    const auto last_done = static_cast<double>(crit[LLM_STAMP_DONE]);
    const auto [at, added] = index.emplace(launch.what, out.classes.size());
    if (added) out.classes.push_back(TimelineClass{launch.what});
    TimelineClass& c = out.classes[at->second];
    ++c.launches;
    c.share += us(last_done - ready);
    c.wait += us(released - ready);
    c.prepare += us(work_start(crit) - released);
    c.work += us(last_done - work_start(crit));
    c.wake += us(first_released - ready);
    c.late += us(std::max(0.0, last_start - ready));
    c.median_work += us(median(work));
    // A launch's blocks wait for every block before them, so the next launch
    // is ready when the last of these ends (or a block before, still later).
    ready = std::max(ready, last_done);
  }
  for (TimelineClass& c : out.classes) {
    for (double* v : per_launch(c)) *v /= c.launches;
  }
  out.step = us(ready - first_release);
  return out;
}

void write_block_stamps(std::ostream& out, const std::vector<TracedLaunch>& launches) {
  uint64_t origin = ~0ull;
  for (const TracedLaunch& l : launches) {
    for (const BlockStamps& b : l.blocks) {
      for (uint64_t t : b) {
        if (t != 0) origin = std::min(origin, t);
      }
    }
  }
  out << "launch,class,block,start,released,prepared,done\n";
  for (size_t i = 0; i < launches.size(); ++i) {
    for (size_t k = 0; k < launches[i].blocks.size(); ++k) {
      out << i << ',' << launches[i].what << ',' << k;
      for (uint64_t t : launches[i].blocks[k]) out << ',' << (t != 0 ? t - origin : 0);
      out << '\n';
    }
  }
}

StepTimeline average_timelines(const std::vector<StepTimeline>& steps) {
  StepTimeline out;
  if (steps.empty()) return out;
  out.classes = steps.front().classes;
  for (TimelineClass& c : out.classes) c = TimelineClass{c.what, c.launches};
  for (const StepTimeline& s : steps) {
    if (s.classes.size() != out.classes.size()) throw Error("timeline: steps of different launches averaged");
    out.step += s.step;
    for (size_t i = 0; i < s.classes.size(); ++i) {
      TimelineClass& c = out.classes[i];
      const TimelineClass& t = s.classes[i];
      if (t.what != c.what || t.launches != c.launches) throw Error("timeline: steps of different launches averaged");
      c.share += t.share;
      const auto mine = per_launch(c);
      const auto theirs = per_launch(t);
      for (size_t v = 0; v < mine.size(); ++v) *mine[v] += *theirs[v];
    }
  }
  const double n = static_cast<double>(steps.size());
  out.step /= n;
  for (TimelineClass& c : out.classes) {
    c.share /= n;
    for (double* v : per_launch(c)) *v /= n;
  }
  return out;
}

}  // namespace nvhcq::llm
