// Recorded queues replayed many times, as LLM decode replays its step graph:
// every replay encodes its QMDs and constant banks again into the kernel
// argument ring, so a long run wraps that ring over and over while chains of
// QMDs from earlier laps are still being retired. Every launch must run exactly
// once per replay, and the last replay must complete.

#include <gtest/gtest.h>

#include <vector>

#include "cases/hcq_suite.h"
#include "gpu/device.h"
#include "gpu/queue.h"

namespace nvhcq::testing {
namespace {

using namespace nvhcq::gpu;  // NOLINT: the suite exercises this layer only

// A chain of `launches` increments replayed `replays` times back to back (each
// replay waiting for the previous one), then the counter.
uint32_t replay_chain(HcqSuite& t, Device& dev, const Program& inc, int launches, int replays) {
  Buffer counter = dev.alloc(4096);
  const uint32_t zero = 0;
  dev.upload(counter, 0, &zero, 4);
  Signal s = dev.new_signal(0);
  ComputeQueue q;
  q.wait(s, 0);
  for (int i = 0; i < launches; ++i) q.exec(inc, KernelArgs().add(counter), LaunchDims{});
  q.signal(s, 1);
  for (int r = 0; r < replays; ++r) {
    q.update_wait(0, s.va(), static_cast<uint64_t>(r));
    q.update_signal(q.size() - 1, s.va(), static_cast<uint64_t>(r) + 1);
    q.submit(dev);
  }
  dev.wait(s, static_cast<uint64_t>(replays));
  uint32_t value = 0;
  dev.download(&value, counter, 0, 4);
  (void)t;
  return value;
}

TEST_P(HcqSuite, ReplaysWrapTheArgumentRingManyTimes) {
  Program inc = load("increment");
  // 83 launches per replay, as a 16-layer decode step: about 80 KiB of QMDs and
  // constant banks each, so 1,200 replays go round the 32 MiB ring three times.
  const int launches = 83, replays = 1200;
  EXPECT_EQ(replay_chain(*this, *dev, inc, launches, replays), static_cast<uint32_t>(launches * replays));
}

TEST_P(HcqSuite, ReplaysOnASecondDeviceInTheSameProcess) {
  // Benchmarks open one device per model in one process; the second and third
  // must behave as the first.
  for (int round = 0; round < 3; ++round) {
    if (round > 0) {
      dev.reset();
      dev = GetParam().open();
    }
    Program inc = load("increment");
    EXPECT_EQ(replay_chain(*this, *dev, inc, 83, 500), 83u * 500u) << "device " << round;
  }
}

}  // namespace
}  // namespace nvhcq::testing
