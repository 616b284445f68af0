// HcqStress: long runs of the HCQ runtime (label stress on a GPU, in test_stress;
// at 1/50 size on the simulator in test_sim). Every result is checked: counters
// count every launch, each pipeline stage leaves its own value, nothing queued
// under backpressure is lost. NVHCQ_STRESS_SCALE scales the counts.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "base/error.h"
#include "cases/robust_suite.h"

namespace nvhcq::testing {
namespace {

using namespace nvhcq::gpu;  // NOLINT: the suite exercises this layer only
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST_P(HcqStress, TenThousandBackToBackKernelsAllComplete) {
  const uint64_t n = stress_count(10000, real());
  Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  Signal s = dev->new_signal(0), t0 = dev->new_signal(0), t1 = dev->new_signal(0);
  ComputeQueue().timestamp(t0).submit(*dev);
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    ComputeQueue().exec(inc, KernelArgs().add(counter), LaunchDims{}).signal(s, i + 1).submit(*dev);
  }
  ComputeQueue().timestamp(t1).submit(*dev);
  dev->wait(s, n);
  dev->synchronize();
  double cpu_s = seconds_since(start);
  EXPECT_EQ(s.value(), n) << "the timeline signal stopped short";
  EXPECT_EQ(read<uint32_t>(counter, 1)[0], n) << "launches were lost or ran twice";
  const EngineChannel& ch = dev->channel(drv::Engine::kCompute);
  EXPECT_EQ(ch.timeline.value(), ch.submitted) << "the channel's own timeline lags its submissions";
  EXPECT_GE(t1.timestamp(), t0.timestamp());
  std::printf("%llu submissions of one launch + signal: %.2f us each (CPU), GPU span %.2f ms\n",
              static_cast<unsigned long long>(n), cpu_s * 1e6 / static_cast<double>(n),
              static_cast<double>(t1.timestamp() - t0.timestamp()) / 1e6);
}

TEST_P(HcqStress, ComputeSignalWaitPipelineAThousandDeep) {
  // Stage i: compute waits for 2i, counts, signals 2i+1; copy waits for 2i+1,
  // saves the count into history[i], signals 2i+2. All queued before any runs.
  const uint64_t n = stress_count(1000, real());
  Program inc = load("increment");
  Buffer counter = dev->alloc(4096), history = dev->alloc(n * 4);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  poison(history);
  Signal s = dev->new_signal(0);
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    ComputeQueue()
        .wait(s, 2 * i)
        .exec(inc, KernelArgs().add(counter), LaunchDims{})
        .memory_barrier()
        .signal(s, 2 * i + 1)
        .submit(*dev);
    CopyQueue()
        .wait(s, 2 * i + 1)
        .copy(history.va() + 4 * i, counter.va(), 4)
        .signal(s, 2 * i + 2)
        .submit(*dev);
  }
  dev->wait(s, 2 * n);
  std::printf("%llu compute->copy stages: %.2f us per stage\n", static_cast<unsigned long long>(n),
              seconds_since(start) * 1e6 / static_cast<double>(n));
  auto h = read<uint32_t>(history, n);
  for (uint64_t i = 0; i < n; ++i)
    ASSERT_EQ(h[i], i + 1) << "stage " << i << " saw another stage's count";
}

TEST_P(HcqStress, AThousandInterleavedComputeAndCopyOperations) {
  // Compute fills one of 4 scratch slots, copy moves it to the result; compute
  // reuses a slot only after its copy is done (signal k), copy starts only after
  // its fill (signal c).
  const uint64_t n = stress_count(1000, real());
  const uint32_t per = 256, slots = 4;
  Program fill = load("affine_fill");
  Buffer scratch = dev->alloc(slots * per * 4), result = dev->alloc(n * per * 4);
  poison(result);
  Signal c = dev->new_signal(0), k = dev->new_signal(0);
  for (uint64_t i = 0; i < n; ++i) {
    ComputeQueue q;
    if (i >= slots) q.wait(k, i + 1 - slots);
    q.exec(fill,
           KernelArgs()
               .add(scratch, (i % slots) * per * 4)
               .add(static_cast<float>(i))
               .add(0.5f)
               .add(per),
           dims_1d(per))
        .memory_barrier()
        .signal(c, i + 1)
        .submit(*dev);
    CopyQueue()
        .wait(c, i + 1)
        .copy(result.va() + i * per * 4, scratch.va() + (i % slots) * per * 4, per * 4)
        .signal(k, i + 1)
        .submit(*dev);
  }
  dev->wait(k, n);
  auto v = read<float>(result, n * per);
  for (uint64_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < per; j += 17) {
      ASSERT_EQ(v[i * per + j], static_cast<float>(i) * j + 0.5f)
          << "operation " << i << ", element " << j;
    }
  }
}

TEST_P(HcqStress, SubmissionsFasterThanTheGpuDrainsLoseNoWork) {
  DeviceOptions o;
  o.compute_ring_entries = 64;
  o.timeout = std::chrono::milliseconds(60000);
  reopen(o);
  const uint64_t n = stress_count(5000, real());
  Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  Signal gate = dev->new_signal(0), s = dev->new_signal(0);
  // The GPU is held at a gate while the CPU queues far more than the ring holds.
  ComputeQueue().wait(gate, 1).submit(*dev);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.set(1);
  });
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    ComputeQueue().exec(inc, KernelArgs().add(counter), LaunchDims{}).signal(s, i + 1).submit(*dev);
  }
  opener.join();
  dev->wait(s, n);
  const uint64_t stalls = dev->channel(drv::Engine::kCompute).gpfifo->stalls();
  std::printf("%llu submissions through a 64-entry ring: %.1f ms, %llu stalled polls\n",
              static_cast<unsigned long long>(n), seconds_since(start) * 1e3,
              static_cast<unsigned long long>(stalls));
  EXPECT_GT(stalls, 0u) << "the ring never filled: backpressure was not exercised";
  EXPECT_EQ(read<uint32_t>(counter, 1)[0], n) << "work queued under backpressure was lost";
}

TEST_P(HcqStress, SharedMemoryKernelsOfEveryBlockSize) {
  const uint64_t launches = stress_count(1000, real());
  const uint32_t grid = 40, max_block = 1024;
  Program sum = load("block_sum");
  std::vector<float> in(uint64_t{max_block} * grid);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(static_cast<int>(i % 23) - 11);
  Buffer x = dev->alloc(in.size() * 4), out = dev->alloc(launches * grid * 4);
  dev->upload(x, 0, in.data(), in.size() * 4);
  poison(out);
  const uint32_t blocks[] = {32, 64, 128, 256, 512, 1024};
  ComputeQueue q;
  for (uint64_t l = 0; l < launches; ++l) {
    uint32_t block = std::min(blocks[l % 6], sum.max_threads_per_block());
    LaunchDims d;
    d.grid[0] = grid;
    d.block[0] = block;
    d.dynamic_shared_bytes = block * 4;
    q.exec(sum, KernelArgs().add(out, l * grid * 4).add(x), d);
    if (q.size() == 100 || l + 1 == launches) {
      q.submit(*dev);
      q.clear();
    }
  }
  dev->synchronize();
  auto v = read<float>(out, launches * grid);
  for (uint64_t l = 0; l < launches; ++l) {
    uint32_t block = std::min(blocks[l % 6], sum.max_threads_per_block());
    for (uint32_t b = 0; b < grid; ++b) {
      double want = 0;
      for (uint32_t t = 0; t < block; ++t) want += in[uint64_t{b} * block + t];
      ASSERT_EQ(v[l * grid + b], static_cast<float>(want))
          << "launch " << l << " (block " << block << "), block " << b;
    }
  }
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HcqStress);

}  // namespace nvhcq::testing
