// Self-ordered launches (gpu::ComputeQueue::exec(..., self_ordered), used by the
// LLM engine's chained decode step): the queue neither chains such a launch to
// the one before it nor waits for idle ahead of it; it is handed to the GPU
// with a SEND_PCAS of its own. Launches after it chain as usual.

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "gpu/hw/methods.h"
#include "gpu/hw/qmd_layout.h"
#include "gpu/qmd.h"
#include "gpu/queue.h"
#include "sim/sim_test_util.h"

namespace nvhcq::sim {
namespace {

using gpu::Buffer;
using gpu::ComputeQueue;
using gpu::KernelArgs;
using gpu::LaunchDims;
using gpu::Signal;

class SelfOrdered : public SimDeviceTest {
 protected:
  // The "increment" kernel, a zeroed counter each of its launches adds one
  // to, and a signal to wait for them with.
  struct Increments {
    gpu::Program inc;
    Buffer counter;
    Signal done;
  };
  Increments open_increments() {
    open();
    Increments r{load("increment"), dev->alloc(4096), dev->new_signal(0)};
    const uint32_t zero = 0;
    dev->upload(r.counter, 0, &zero, 4);
    return r;
  }
};

// The methods of a pushbuffer as the simulated host engine splits them:
// (subchannel, method, data).
std::vector<std::array<uint32_t, 3>> methods_of(const std::vector<uint32_t>& words) {
  std::vector<std::array<uint32_t, 3>> out;
  std::string error;
  EXPECT_TRUE(parse_pushbuffer(words, out, &error)) << error;
  return out;
}

size_t count_of(const std::vector<std::array<uint32_t, 3>>& methods, uint32_t subch, uint32_t method) {
  size_t n = 0;
  for (const auto& m : methods) n += m[0] == subch && m[1] == method ? 1 : 0;
  return n;
}

TEST_P(SelfOrdered, ALaunchIsHandedOverOnItsOwnAndLaterOnesChainAgain) {
  auto [inc, counter, done] = open_increments();
  auto record = [&](bool self_ordered) {
    ComputeQueue q;
    q.exec(inc, KernelArgs().add(counter), LaunchDims{})
        .exec(inc, KernelArgs().add(counter), LaunchDims{}, self_ordered)
        .exec(inc, KernelArgs().add(counter), LaunchDims{})
        .signal(done, 0);
    return q;
  };
  const auto ordered = methods_of(record(false).encode(*dev).words());
  const auto self = methods_of(record(true).encode(*dev).words());
  using namespace gpu::hw;
  // In order: one SEND_PCAS, the other two launches chained behind it.
  EXPECT_EQ(count_of(ordered, kSubchCompute, compute::SEND_PCAS_A), 1u);
  // Self-ordered: the second launch is sent on its own (no wait for idle
  // first), and the third chains to it.
  EXPECT_EQ(count_of(self, kSubchCompute, compute::SEND_PCAS_A), 2u);
  EXPECT_EQ(count_of(self, kSubchHost, host::WFI), count_of(ordered, kSubchHost, host::WFI));

  // All three run.
  sim().stats().reset();
  ComputeQueue q = record(true);
  q.update_signal(q.size() - 1, done.va(), 1);
  q.submit(*dev);
  dev->wait(done, 1);
  EXPECT_EQ(read_u32(counter, 1)[0], 3u);
  EXPECT_EQ(sim().stats().launches.load(), 3u);
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

// The first launch of a run of self-ordered ones drops the SMs' L1 and
// constant caches (the CPU wrote the run's constants and inputs before the
// submission); the self-ordered launches behind it keep them, since the
// kernels of a run read each other's outputs through L2. Every launch still
// has its own constant bank 0 marked for invalidation.
TEST_P(SelfOrdered, OnlyTheFirstLaunchOfARunInvalidatesCaches) {
  auto [inc, counter, done] = open_increments();
  ComputeQueue q;
  q.exec(inc, KernelArgs().add(counter), LaunchDims{})
      .exec(inc, KernelArgs().add(counter), LaunchDims{}, true)
      .exec(inc, KernelArgs().add(counter), LaunchDims{}, true)
      .signal(done, 1);
  using namespace gpu::hw;
  std::vector<uint64_t> qmds;
  for (const auto& m : methods_of(q.encode(*dev).words())) {
    if (m[0] == kSubchCompute && m[1] == compute::SEND_PCAS_A) qmds.push_back(uint64_t{m[2]} << 8);
  }
  ASSERT_EQ(qmds.size(), 3u);
  const gpu::Buffer& ring = dev->kernargs().buffer();
  for (size_t i = 0; i < qmds.size(); ++i) {
    ASSERT_GE(qmds[i], ring.va());
    const uint8_t* qmd = static_cast<const uint8_t*>(ring.cpu()) + (qmds[i] - ring.va());
    const QmdLayout& l = *dev->arch().qmd;
    const uint64_t first = i == 0 ? 1 : 0;
    for (QmdField f : l.launch_cache_invalidations()) {
      EXPECT_EQ(gpu::read_bits(qmd, f), first) << "launch " << i << ", QMD bits " << f.hi << ":" << f.lo;
    }
    EXPECT_EQ(gpu::read_bits(qmd, l.cbuf_invalidate.at(0)), 1u) << "launch " << i;
    // A self-ordered launch with another behind it ends with a GPU-scope
    // membar; the last keeps the system-scope one (the host may read).
    EXPECT_EQ(gpu::read_bits(qmd, l.cwd_membar_type), i == 1 ? kCwdMembarTypeL1Membar : kCwdMembarTypeL1Sysmembar)
        << "launch " << i;
  }

  q.submit(*dev);
  dev->wait(done, 1);
  EXPECT_EQ(read_u32(counter, 1)[0], 3u);
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

// Blocks of consecutive self-ordered launches share SMs, and an SM drains
// before its carve-out changes: a launch and the self-ordered ones right
// behind it all ask for the largest carve-out any of them wants. Launches in
// order keep their own.
TEST_P(SelfOrdered, LaunchesThatShareSmsAskForOneCarveOut) {
  auto [inc, counter, done] = open_increments();
  auto dims = [](uint32_t shared) {
    LaunchDims d;
    d.dynamic_shared_bytes = shared;
    return d;
  };
  ComputeQueue q;
  q.exec(inc, KernelArgs().add(counter), dims(0))
      .exec(inc, KernelArgs().add(counter), dims(0))
      .exec(inc, KernelArgs().add(counter), dims(40 * 1024), true)
      .exec(inc, KernelArgs().add(counter), dims(2 * 1024), true)
      .exec(inc, KernelArgs().add(counter), dims(0))
      .signal(done, 1);
  const std::vector<uint32_t> kib = q.carveout_targets(dev->arch());
  ASSERT_EQ(kib.size(), 6u);
  EXPECT_EQ(kib[0], kib[4]) << "launches in order, alone, want the same";
  EXPECT_GT(kib[2], kib[0]);
  EXPECT_GE(uint64_t{kib[2]} * 1024, 40u * 1024);
  EXPECT_EQ(kib[1], kib[2]) << "the launch the run follows";
  EXPECT_EQ(kib[3], kib[2]) << "a self-ordered launch behind a larger one";
  EXPECT_EQ(kib[5], 0u) << "not a launch";

  q.submit(*dev);
  dev->wait(done, 1);
  EXPECT_EQ(read_u32(counter, 1)[0], 5u);
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

// A launch may ask for more carve-out than its blocks need (the LLM decode
// steps do, docs/llm-gpu.md): the smallest configuration that holds the
// request, the largest for more than that; the launches it shares SMs with
// follow it.
TEST_P(SelfOrdered, ALaunchMayAskForALargerCarveOut) {
  auto [inc, counter, done] = open_increments();
  const std::vector<uint32_t>& configs = dev->arch().shared_configs_kib;
  ASSERT_GE(configs.size(), 3u);
  const uint32_t second_largest = configs[configs.size() - 2];
  LaunchDims plain, asks, too_much;
  asks.min_carveout_kib = second_largest - 1;  // between two configurations
  too_much.min_carveout_kib = configs.back() + 64;
  ComputeQueue q;
  q.exec(inc, KernelArgs().add(counter), plain)
      .exec(inc, KernelArgs().add(counter), asks)
      .exec(inc, KernelArgs().add(counter), plain, true)
      .exec(inc, KernelArgs().add(counter), too_much)
      .signal(done, 1);
  const std::vector<uint32_t> kib = q.carveout_targets(dev->arch());
  ASSERT_EQ(kib.size(), 5u);
  EXPECT_LT(kib[0], second_largest) << "a kernel without shared memory, alone";
  EXPECT_EQ(kib[1], second_largest);
  EXPECT_EQ(kib[2], second_largest) << "a self-ordered launch behind one that asks";
  EXPECT_EQ(kib[3], configs.back());

  q.submit(*dev);
  dev->wait(done, 1);
  EXPECT_EQ(read_u32(counter, 1)[0], 4u);
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

INSTANTIATE_TEST_SUITE_P(Sim, SelfOrdered, ::testing::Values("rm", "tegra"), param_name);

}  // namespace
}  // namespace nvhcq::sim
