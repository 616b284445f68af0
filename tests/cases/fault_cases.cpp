// HcqFaults: what goes wrong on the GPU reaches the program as nvhcq::Error
// (GpuFaultError for faults and hangs) carrying the driver's fault report, within
// a bounded time; the process goes on, and a reopened device works. Faults here
// are deliberate: each test declares the Xid it causes to the kernel-log check.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "base/error.h"
#include "cases/robust_suite.h"
#include "support/kernel_log.h"

namespace nvhcq::testing {
namespace {

using namespace nvhcq::gpu;  // NOLINT: the suite exercises this layer only
using Clock = std::chrono::steady_clock;

constexpr uint64_t kFarAway = 256ull << 30;  // no allocation of these tests reaches this far

// An address `kFarAway` outside `b`: below it when the driver places buffers
// high (nvgpu allocates top-down), above it otherwise.
uint64_t far_outside(const Buffer& b) {
  return b.va() >= 2 * kFarAway ? b.va() - kFarAway : b.va() + b.size() + kFarAway;
}

class FaultChecks {
 public:
  // Synchronizes, expecting a GpuFaultError within `limit`; returns its text.
  static std::string expect_fault(Device& dev, std::chrono::milliseconds limit) {
    auto start = Clock::now();
    try {
      dev.synchronize();
    } catch (const GpuFaultError& e) {
      auto took = Clock::now() - start;
      EXPECT_LT(took, limit) << "the fault was raised, but not promptly";
      std::string what = e.what();
      std::printf("raised after %.0f ms: %s\n",
                  std::chrono::duration<double, std::milli>(took).count(), what.c_str());
      return what;
    }
    ADD_FAILURE() << "the GPU did not report a fault";
    return {};
  }
};

// After a fault: the device refuses new work; a reopened device runs kernels and copies.
void check_refuses_then_reopens(std::unique_ptr<Device>& dev, const std::function<void()>& reopen) {
  {
    Signal s = dev->new_signal(0);
    EXPECT_TRUE(dev->faulted());
    EXPECT_THROW(ComputeQueue().signal(s, 1).submit(*dev), GpuFaultError)
        << "a faulted device must refuse new work";
  }
  reopen();
  Program fill = Program::embedded(*dev, "selftest.cu", "affine_fill");
  Buffer a = dev->alloc(256 * 4), b = dev->alloc(256 * 4);
  ComputeQueue()
      .exec(fill, KernelArgs().add(a).add(0.5f).add(3.0f).add(256u),
            LaunchDims{{2, 1, 1}, {128, 1, 1}, 0})
      .submit(*dev);
  dev->synchronize();
  CopyQueue().copy(b.va(), a.va(), 256 * 4).submit(*dev);
  dev->synchronize();
  std::vector<float> v(256);
  dev->download(v.data(), b, 0, v.size() * 4);
  for (uint32_t i = 0; i < 256; ++i)
    ASSERT_FLOAT_EQ(v[i], 0.5f * i + 3.0f) << "after reopening, element " << i;
}

bool names_a_fault(const std::string& what) {
  return what.find("fault") != std::string::npos || what.find("Xid") != std::string::npos ||
         what.find("error") != std::string::npos;
}

TEST_P(HcqFaults, OutOfBoundsStoreIsAnMmuFaultRaisedPromptly) {
  ExpectKernelLogXid(31);
  {
    Program store = load("store_to");
    Buffer buf = dev->alloc(4096);
    uint64_t wild = far_outside(buf);
    ComputeQueue().exec(store, KernelArgs().ptr(wild).add(0xbadu), LaunchDims{}).submit(*dev);
    std::string what = FaultChecks::expect_fault(*dev, std::chrono::seconds(2));
    EXPECT_TRUE(names_a_fault(what)) << what;
  }
  check_refuses_then_reopens(dev, [this] { reopen(); });
}

TEST_P(HcqFaults, OutOfBoundsLoadIsAnMmuFaultRaisedPromptly) {
  ExpectKernelLogXid(31);
  {
    Program add = load("add_f32");
    Buffer x = dev->alloc(1024 * 4), out = dev->alloc(1024 * 4);
    // y points far past x: every thread's load misses.
    ComputeQueue()
        .exec(add, KernelArgs().add(out).add(x).ptr(far_outside(x)).add(1024u), dims_1d(1024))
        .submit(*dev);
    std::string what = FaultChecks::expect_fault(*dev, std::chrono::seconds(2));
    EXPECT_TRUE(names_a_fault(what)) << what;
  }
  check_refuses_then_reopens(dev, [this] { reopen(); });
}

TEST_P(HcqFaults, CopyFromABadAddressIsAFaultRaisedPromptly) {
  ExpectKernelLogXid(31);
  {
    Buffer dst = dev->alloc(64 * 1024);
    CopyQueue().copy(dst.va(), far_outside(dst), 64 * 1024).submit(*dev);
    std::string what = FaultChecks::expect_fault(*dev, std::chrono::seconds(2));
    EXPECT_TRUE(names_a_fault(what)) << what;
  }
  check_refuses_then_reopens(dev, [this] { reopen(); });
}

TEST_P(HcqFaults, CopyToABadAddressIsAFaultRaisedPromptly) {
  ExpectKernelLogXid(31);
  {
    Buffer src = dev->alloc(4096);
    CopyQueue().copy(far_outside(src), src.va(), 4096).submit(*dev);
    std::string what = FaultChecks::expect_fault(*dev, std::chrono::seconds(2));
    EXPECT_TRUE(names_a_fault(what)) << what;
  }
  check_refuses_then_reopens(dev, [this] { reopen(); });
}

TEST_P(HcqFaults, SemaphoreWaitThatNeverCompletesTimesOutAndTheProcessGoesOn) {
  DeviceOptions o;
  o.timeout = std::chrono::milliseconds(300);
  reopen(o);
  {
    Signal never = dev->new_signal(0), done = dev->new_signal(0);
    ComputeQueue().wait(never, 1).signal(done, 1).submit(*dev);
    auto start = Clock::now();
    try {
      dev->wait(done, 1);
      FAIL() << "a wait on a signal nobody sets returned";
    } catch (const GpuFaultError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("did not reach signal value 1"), std::string::npos) << what;
      std::printf("raised after %.0f ms: %s\n",
                  std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
                  e.what());
    }
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
    EXPECT_FALSE(dev->faulted()) << "a timeout is not a channel error";
    // The copy engine has its own channel: it keeps working meanwhile. (Host
    // buffers, read and written by the CPU directly: Device::upload and download
    // synchronize both channels on unified memory, so they would time out too.)
    Buffer a = dev->alloc_host(4096), b = dev->alloc_host(4096);
    fill_pattern(a.cpu_as<uint8_t>(), 4096, 99);
    std::memset(b.cpu(), 0, 4096);
    Signal copied = dev->new_signal(0);
    CopyQueue().copy(b.va(), a.va(), 4096).signal(copied, 1).submit(*dev);
    dev->wait(copied, 1);
    EXPECT_EQ(std::memcmp(a.cpu(), b.cpu(), 4096), 0)
        << "the copy channel stalled with the compute channel";
    EXPECT_EQ(done.value(), 0u) << "the blocked channel must not have moved";
  }
  // Closing a device whose channel waits forever is bounded too.
  auto start = Clock::now();
  dev.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "closing a hung device";
  reopen();
  Program fill = load("affine_fill");
  Buffer out = dev->alloc(64 * 4);
  ComputeQueue()
      .exec(fill, KernelArgs().add(out).add(1.0f).add(1.0f).add(64u),
            LaunchDims{{1, 1, 1}, {64, 1, 1}, 0})
      .submit(*dev);
  dev->synchronize();
  EXPECT_FLOAT_EQ(read<float>(out, 64)[63], 64.0f);
}

TEST_P(HcqFaults, HungChannelWithAFullGpfifoRingTimesOutInsteadOfHanging) {
  DeviceOptions o;
  o.compute_ring_entries = 16;
  o.timeout = std::chrono::milliseconds(300);
  reopen(o);
  Signal never = dev->new_signal(0), s = dev->new_signal(0);
  ComputeQueue().wait(never, 1).submit(*dev);
  uint64_t queued = 0;
  std::string what;
  auto start = Clock::now();
  for (int i = 0; i < 256 && what.empty(); ++i) {
    try {
      ComputeQueue().signal(s, queued + 1).submit(*dev);
      ++queued;
    } catch (const GpuFaultError& e) {
      what = e.what();
    }
  }
  ASSERT_FALSE(what.empty()) << "256 submissions fit a 16-entry ring whose GPU is blocked";
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_NE(what.find("GPFIFO"), std::string::npos) << what;
  std::printf("%llu submissions queued, then: %s\n", static_cast<unsigned long long>(queued),
              what.c_str());
  // (A GPU's PBDMA may fetch a few entries past the blocked one: more than 15 may fit.)
  // The GPU resumes: everything queued completes, in order, and new work runs.
  never.set(1);
  dev->wait(s, queued);
  EXPECT_EQ(s.value(), queued);
  ComputeQueue().signal(s, 1000).submit(*dev);
  dev->wait(s, 1000);
  EXPECT_EQ(s.value(), 1000u);
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HcqFaults);

}  // namespace nvhcq::testing
