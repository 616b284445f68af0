// The simulated engines' semantics, driven by hand-written pushbuffers through
// gpu::Device on both front ends: host semaphores (32- and 64-bit, circular
// compares, timestamps), the copy engine's semaphores, and the doorbell.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "drv/tegra/tegra_gpu.h"
#include "gpu/hw/methods.h"
#include "gpu/queue.h"
#include "sim/sim_test_util.h"

namespace nvhcq::sim {
namespace {

namespace hw = gpu::hw;
using gpu::PushBuffer;
using gpu::Signal;

class Engine : public SimDeviceTest {
 protected:
  // A host semaphore operation on `va` with `payload` and SEM_EXECUTE `execute`.
  static void semaphore(PushBuffer& pb, uint64_t va, uint64_t payload, uint32_t execute) {
    pb.method(hw::kSubchHost, hw::host::SEM_ADDR_LO,
              {PushBuffer::lo(va), PushBuffer::hi(va), PushBuffer::lo(payload),
               PushBuffer::hi(payload), execute});
  }
  void run(PushBuffer& pb, drv::Engine e = drv::Engine::kCompute) {
    dev->submit(e, pb);
    dev->synchronize();
  }
};

TEST_P(Engine, ThirtyTwoBitReleaseWritesOnlyTheLowWord) {
  open();
  Signal s = dev->new_signal(0xaaaaaaaa00000000ull);
  PushBuffer pb;
  semaphore(pb, s.va(), 0x1234567887654321ull, hw::host::SEM_EXECUTE_OPERATION_RELEASE);
  run(pb);
  EXPECT_EQ(s.value(), 0xaaaaaaaa87654321ull);
}

TEST_P(Engine, CircularAcquireCompareWrapsAround) {
  open();
  Signal s = dev->new_signal(2), done = dev->new_signal(0);
  PushBuffer pb;
  // 2 is "after" 0xfffffffe in 32-bit circular order: the acquire passes.
  semaphore(pb, s.va(), 0xfffffffeull, hw::host::SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ);
  semaphore(pb, done.va(), 1,
            hw::host::SEM_EXECUTE_OPERATION_RELEASE | hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
  run(pb);
  EXPECT_EQ(done.value(), 1u);
  // And 64-bit: (1 << 40) + 1 is after (1 << 40) - 5.
  s.set((1ull << 40) + 1);
  PushBuffer pb64;
  semaphore(
      pb64, s.va(), (1ull << 40) - 5,
      hw::host::SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ | hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
  semaphore(pb64, done.va(), 2,
            hw::host::SEM_EXECUTE_OPERATION_RELEASE | hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
  run(pb64);
  EXPECT_EQ(done.value(), 2u);
}

TEST_P(Engine, EqualAcquireWaitsForTheExactValue) {
  open();
  Signal s = dev->new_signal(6), done = dev->new_signal(0);
  PushBuffer pb;
  semaphore(pb, s.va(), 5,
            hw::host::SEM_EXECUTE_OPERATION_ACQUIRE | hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
  semaphore(pb, done.va(), 1,
            hw::host::SEM_EXECUTE_OPERATION_RELEASE | hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
  dev->submit(drv::Engine::kCompute, pb);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.value(), 0u) << "6 is not 5";
  s.set(5);
  dev->wait(done, 1);
  EXPECT_GE(sim().stats().acquires_waited.load(), 1u);
}

TEST_P(Engine, ReleasesCarryTheGpuTimestamp) {
  open();
  Signal a = dev->new_signal(0), b = dev->new_signal(0);
  gpu::ComputeQueue().signal(a, 1).submit(*dev);
  gpu::CopyQueue().signal(b, 1).submit(*dev);
  dev->synchronize();
  EXPECT_GT(a.timestamp(), 0u);
  EXPECT_GT(b.timestamp(), 0u) << "the copy engine's four-word release";
  gpu::ComputeQueue().signal(a, 2).submit(*dev);
  dev->synchronize();
  uint64_t first = b.timestamp();
  EXPECT_GT(a.timestamp(), first) << "GPU time moves forward";
}

TEST_P(Engine, CopyEngineOneWordSemaphore) {
  open();
  Signal s = dev->new_signal(0x5555555500000000ull);
  PushBuffer pb;
  pb.method(hw::kSubchCopy, hw::copy::SET_SEMAPHORE_A,
            {PushBuffer::hi(s.va()), PushBuffer::lo(s.va()), 77, 0});
  pb.method(hw::kSubchCopy, hw::copy::LAUNCH_DMA,
            {hw::copy::LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD});
  run(pb, drv::Engine::kCopy);
  EXPECT_EQ(s.value(), 0x555555550000004dull);
}

TEST_P(Engine, CopiesAreCountedByteForByte) {
  open();
  gpu::Buffer a = dev->alloc(3 << 20), b = dev->alloc(3 << 20);
  gpu::CopyQueue().copy(b.va(), a.va(), 3 << 20).copy(a.va(), b.va(), 100).submit(*dev);
  dev->synchronize();
  EXPECT_EQ(sim().stats().dma_bytes.load(), (3u << 20) + 100u);
  EXPECT_EQ(sim().stats().dma_copies.load(), 2u);
}

TEST_P(Engine, EveryLaunchOfAChainRunsOnce) {
  open();
  gpu::Program inc = load("increment");
  gpu::Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  sim().stats().reset();
  gpu::ComputeQueue q;
  for (int i = 0; i < 37; ++i) q.exec(inc, gpu::KernelArgs().add(counter), gpu::LaunchDims{});
  q.submit(*dev);
  dev->synchronize();
  EXPECT_EQ(read_u32(counter, 1)[0], 37u);
  EXPECT_EQ(sim().stats().launches.load(), 37u) << "one SEND_PCAS and 36 dependent QMDs";
}

TEST(SimDoorbell, AnUnknownTokenIsAViolation) {
  drv::tegra::TegraGpu gpu;
  drv::ChannelHandles h = gpu.open_channel(drv::Engine::kCompute, 64);
  *h.doorbell = h.token;
  *h.doorbell = 0xbad;
  auto start = std::chrono::steady_clock::now();
  while (machine().log().violations().empty() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(machine().log().violations().size(), 1u);
  EXPECT_NE(machine().log().violations()[0].find("token 2989"), std::string::npos)
      << machine().log().violations()[0];
  machine().log().clear();
}

INSTANTIATE_TEST_SUITE_P(Sim, Engine, ::testing::Values("rm", "tegra"), param_name);

}  // namespace
}  // namespace nvhcq::sim
