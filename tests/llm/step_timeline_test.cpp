// The decode timeline (llm/gpu/step_timeline): launch shares and their split at
// the critical block, wake-ups and late starts computed from hand-made block
// stamps; stamps a kernel built without LLM_TRACE would leave (zeros) refused.

#include "llm/gpu/step_timeline.h"

#include <gtest/gtest.h>

#include <sstream>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

// A block's stamps in ns: start, released, prepared (0: none), done.
BlockStamps block(uint64_t start, uint64_t released, uint64_t prepared, uint64_t done) {
  return BlockStamps{start, released, prepared, done};
}

// Three launches: "a" (two blocks), "b" (three blocks, one of which starts
// only after "a" has ended), "a" again (one block).
std::vector<TracedLaunch> three_launches() {
  return {
      TracedLaunch{"a", {block(1000, 1100, 1400, 3000), block(1050, 1200, 1500, 4000)}},
      // Ready at 4000 (a's last block): released at 4500, 4600 and, a late
      // block starting at 5000, 5100; prepared 600 / 900 / 400 after.
      TracedLaunch{"b",
                   {block(2000, 4500, 5100, 7000), block(2100, 4600, 5500, 8000), block(5000, 5100, 5500, 9500)}},
      // Ready at 9500; no preparation stamped.
      TracedLaunch{"a", {block(6000, 10000, 0, 12000)}},
  };
}

TEST(StepTimeline, SharesAddUpToTheStep) {
  const StepTimeline t = summarize_timeline(three_launches());
  // From the first launch's first release (1100) to the last end (12000).
  EXPECT_DOUBLE_EQ(t.step, 10.9);
  ASSERT_EQ(t.classes.size(), 2u);
  EXPECT_EQ(t.classes[0].what, "a");
  EXPECT_EQ(t.classes[0].launches, 2);
  EXPECT_EQ(t.classes[1].what, "b");
  EXPECT_EQ(t.classes[1].launches, 1);
  // a: 4000 - 1100 and 12000 - 9500; b: 9500 - 4000.
  EXPECT_DOUBLE_EQ(t.classes[0].share, 2.9 + 2.5);
  EXPECT_DOUBLE_EQ(t.classes[1].share, 5.5);
  EXPECT_DOUBLE_EQ(t.classes[0].share + t.classes[1].share, t.step);
}

TEST(StepTimeline, SplitsAShareAtItsCriticalBlock) {
  const StepTimeline t = summarize_timeline(three_launches());
  const TimelineClass& b = t.classes[1];
  // The critical block is the late one: ready 4000, released 5100, prepared
  // 5500, done 9500.
  EXPECT_DOUBLE_EQ(b.wait, 1.1);
  EXPECT_DOUBLE_EQ(b.prepare, 0.4);
  EXPECT_DOUBLE_EQ(b.work, 4.0);
  EXPECT_DOUBLE_EQ(b.wait + b.prepare + b.work, b.share);
  EXPECT_DOUBLE_EQ(b.wake, 0.5);         // the first release, 4500
  EXPECT_DOUBLE_EQ(b.late, 1.0);         // the last start, 5000
  EXPECT_DOUBLE_EQ(b.median_work, 2.5);  // of 1.9, 2.5 and 4.0
  // "a": the first launch waits for nothing; its critical block (released
  // 1200, prepared 1500, done 4000) is released 0.1 after the first. The
  // second "a" has no preparation: its work runs from its release (10000).
  const TimelineClass& a = t.classes[0];
  EXPECT_DOUBLE_EQ(a.wait, (0.1 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(a.prepare, (0.3 + 0.0) / 2);
  EXPECT_DOUBLE_EQ(a.work, (2.5 + 2.0) / 2);
  EXPECT_DOUBLE_EQ(a.wake, (0.0 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(a.late, 0.0);
  EXPECT_DOUBLE_EQ(a.median_work, (2.05 + 2.0) / 2);  // of 1.6 and 2.5; then 2.0
}

TEST(StepTimeline, AveragesStepsClassByClass) {
  std::vector<TracedLaunch> slower = three_launches();
  for (TracedLaunch& l : slower) {
    for (BlockStamps& s : l.blocks) {
      for (uint64_t& v : s) v = v ? 2 * v : 0;  // every interval twice as long
    }
  }
  const StepTimeline one = summarize_timeline(three_launches()), two = summarize_timeline(slower);
  const StepTimeline mean = average_timelines({one, two});
  EXPECT_DOUBLE_EQ(mean.step, 1.5 * one.step);
  ASSERT_EQ(mean.classes.size(), 2u);
  EXPECT_EQ(mean.classes[1].launches, 1);
  EXPECT_DOUBLE_EQ(mean.classes[1].share, 1.5 * one.classes[1].share);
  EXPECT_DOUBLE_EQ(mean.classes[1].work, 1.5 * one.classes[1].work);
  EXPECT_DOUBLE_EQ(mean.classes[0].median_work, 1.5 * one.classes[0].median_work);
  EXPECT_TRUE(average_timelines({}).classes.empty());
  // Steps of different launches do not average.
  std::vector<TracedLaunch> other = three_launches();
  other.pop_back();
  EXPECT_THROW(average_timelines({one, summarize_timeline(other)}), Error);
}

// A block that left at once, unstamped, counted by another block of its
// launch (kernels/llm_chain.cuh), first or later in the grid: left out.
TEST(StepTimeline, LeavesOutBlocksThatLeftUnstamped) {
  const StepTimeline want = summarize_timeline(three_launches());
  for (size_t at : {size_t{0}, size_t{2}, size_t{3}}) {
    std::vector<TracedLaunch> launches = three_launches();
    auto& b = launches[1].blocks;
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), BlockStamps{});
    const StepTimeline got = summarize_timeline(launches);
    EXPECT_DOUBLE_EQ(got.step, want.step) << "at " << at;
    ASSERT_EQ(got.classes.size(), want.classes.size());
    for (size_t c = 0; c < want.classes.size(); ++c) {
      EXPECT_DOUBLE_EQ(got.classes[c].share, want.classes[c].share) << "at " << at;
      EXPECT_DOUBLE_EQ(got.classes[c].wait, want.classes[c].wait) << "at " << at;
      EXPECT_DOUBLE_EQ(got.classes[c].wake, want.classes[c].wake) << "at " << at;
      EXPECT_DOUBLE_EQ(got.classes[c].late, want.classes[c].late) << "at " << at;
      EXPECT_DOUBLE_EQ(got.classes[c].work, want.classes[c].work) << "at " << at;
      EXPECT_DOUBLE_EQ(got.classes[c].median_work, want.classes[c].median_work) << "at " << at;
    }
  }
}

TEST(StepTimeline, RefusesBlocksWithoutStamps) {
  std::vector<TracedLaunch> launches = three_launches();
  launches[1].blocks[2][LLM_STAMP_DONE] = 0;
  EXPECT_THROW(summarize_timeline(launches), FormatError);
  launches = three_launches();
  for (BlockStamps& s : launches[0].blocks) s = BlockStamps{};  // what an untraced kernel leaves
  EXPECT_THROW(summarize_timeline(launches), FormatError);
  launches = three_launches();
  launches[2].blocks.clear();
  EXPECT_THROW(summarize_timeline(launches), FormatError);
  EXPECT_TRUE(summarize_timeline({}).classes.empty());
}

// The CSV of NVHCQ_TIMELINE_BLOCKS: a line per block, in launch and grid
// order, stamps from the step's earliest (1000), unstamped ones 0.
TEST(StepTimeline, WritesEveryBlocksStampsAsCsv) {
  std::ostringstream out;
  write_block_stamps(out, three_launches());
  EXPECT_EQ(out.str(),
            "launch,class,block,start,released,prepared,done\n"
            "0,a,0,0,100,400,2000\n"
            "0,a,1,50,200,500,3000\n"
            "1,b,0,1000,3500,4100,6000\n"
            "1,b,1,1100,3600,4500,7000\n"
            "1,b,2,4000,4100,4500,8500\n"
            "2,a,0,5000,9000,0,11000\n");
}

}  // namespace
}  // namespace nvhcq::llm
