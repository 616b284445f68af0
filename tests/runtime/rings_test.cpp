// The command/argument ring and the GPFIFO ring, against fake memory: no GPU needed.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/error.h"
#include "gpu/gpfifo.h"
#include "gpu/hw/methods.h"
#include "gpu/pushbuffer.h"
#include "gpu/timeline_ring.h"

namespace nvhcq::gpu {
namespace {

Buffer fake_buffer(std::vector<uint8_t>& backing, uint64_t va) {
  drv::Allocation a;
  a.gpu_va = va;
  a.cpu = backing.data();
  a.size = backing.size();
  return Buffer(nullptr, a);  // no device: nothing to free
}

TEST(TimelineRing, ReusesSpaceOnlyAfterTheGpuPassedItsTag) {
  std::vector<uint8_t> mem(4096);
  std::vector<uint64_t> waited;
  uint64_t completed = 0;
  TimelineRing ring(fake_buffer(mem, 0x100000), [&](uint64_t v) {
    waited.push_back(v);
    completed = std::max(completed, v);
  });
  // 12 submissions of 1 KiB into a 4 KiB ring: from the 5th on, each must wait for
  // the submission that used its bytes four submissions earlier.
  for (uint64_t s = 1; s <= 12; ++s) {
    auto span = ring.alloc(1000, 256);
    EXPECT_EQ(span.va - 0x100000, static_cast<uint64_t>(span.cpu - mem.data()));
    EXPECT_LE(span.va + span.size, 0x100000u + mem.size());
    ring.tag(s);
  }
  ASSERT_FALSE(waited.empty());
  for (size_t i = 1; i < waited.size(); ++i) EXPECT_LT(waited[i - 1], waited[i]);
  EXPECT_EQ(waited.back(), 8u) << "submission 12 reuses the bytes of submission 8";
}

TEST(TimelineRing, OversizedOrSelfOverlappingSubmissionsAreErrors) {
  std::vector<uint8_t> mem(4096);
  TimelineRing ring(fake_buffer(mem, 0x100000), [](uint64_t) {});
  EXPECT_THROW(ring.alloc(3000, 16), Error) << "more than half the ring in one piece";
  ring.alloc(1500, 16);
  ring.alloc(1500, 16);
  EXPECT_THROW(ring.alloc(1500, 16), Error) << "one submission would wrap onto itself";
}

TEST(PushBuffer, MethodHeadersEncodeSubchannelCountAndAddress) {
  PushBuffer pb;
  pb.method(hw::kSubchCompute, hw::compute::SEND_PCAS_A, {0x1234});
  pb.method(hw::kSubchHost, hw::host::SEM_ADDR_LO, {1, 2, 3, 4, 5});
  ASSERT_EQ(pb.words().size(), 8u);
  EXPECT_EQ(pb.words()[0], 0x200120adu);  // INC method, 1 word, subch 1, 0x2b4 >> 2
  EXPECT_EQ(pb.words()[1], 0x1234u);
  EXPECT_EQ(pb.words()[2], 0x20050017u);  // 5 words, subch 0, 0x5c >> 2
  EXPECT_THROW(pb.method(0, 0x5e, {1}), Error) << "methods are word aligned";
  EXPECT_EQ(hw::gpfifo_entry(0x12345000ull, 7), 0x12345000ull | (7ull << 42) | (1ull << 41));
}

struct FakeChannel {
  std::vector<uint64_t> ring;
  volatile uint32_t gp_put = 0, gp_get = 0, doorbell = 0;
  drv::ChannelHandles handles() {
    drv::ChannelHandles h;
    h.ring = ring.data();
    h.ring_entries = static_cast<uint32_t>(ring.size());
    h.gp_put = &gp_put;
    h.gp_get = &gp_get;
    h.doorbell = &doorbell;
    h.token = 0x42;
    return h;
  }
};

TEST(GpfifoRing, WritesEntriesAdvancesPutAndRingsTheDoorbell) {
  FakeChannel ch;
  ch.ring.resize(8);
  GpfifoRing ring(ch.handles(), nullptr);
  ring.submit(0x1000, 10);
  EXPECT_EQ(ch.ring[0], hw::gpfifo_entry(0x1000, 10));
  EXPECT_EQ(ch.gp_put, 1u);
  EXPECT_EQ(ch.doorbell, 0x42u);
  EXPECT_THROW(ring.submit(1ull << 41, 4), Error) << "pushbuffers live below 1 TiB";
}

TEST(GpfifoRing, NeverOverwritesEntriesTheGpuHasNotConsumed) {
  FakeChannel ch;
  ch.ring.resize(4);
  std::atomic<int> stalls{0};
  GpfifoRing ring(ch.handles(), [&] { ++stalls; });
  for (int i = 0; i < 3; ++i) ring.submit(0x1000 + i * 0x100, 1);  // ring of 4 holds 3
  std::thread gpu([&] {
    while (stalls.load() == 0) std::this_thread::yield();
    EXPECT_EQ(ch.ring[3], 0u) << "entry written before the GPU freed a slot";
    ch.gp_get = 1;  // the "GPU" consumed entry 0
  });
  ring.submit(0x2000, 1);
  gpu.join();
  EXPECT_GT(stalls.load(), 0);
  EXPECT_EQ(ch.ring[3], hw::gpfifo_entry(0x2000, 1));
  EXPECT_EQ(ch.gp_put, 0u) << "put wrapped around";
}

}  // namespace
}  // namespace nvhcq::gpu

namespace nvhcq::gpu {
namespace {

TEST(TimelineRing, WrappedSubmissionIsTaggedAsOne) {
  std::vector<uint8_t> mem(4096);
  std::vector<uint64_t> waited;
  TimelineRing ring(fake_buffer(mem, 0x100000), [&](uint64_t v) { waited.push_back(v); });
  ring.alloc(1500, 256);  // submission 1: [0, 1500)
  ring.tag(1);
  ring.alloc(1500, 256);  // submission 2 starts at 1536 ...
  ring.alloc(1500, 256);  // ... and wraps to 0: waits for submission 1
  ring.tag(2);
  ASSERT_EQ(waited, (std::vector<uint64_t>{1}));
  ring.alloc(1500, 256);  // submission 3 at 1536: overlaps submission 2's pre-wrap half
  EXPECT_EQ(waited.back(), 2u) << "the pre-wrap half carries submission 2's tag";
}

}  // namespace
}  // namespace nvhcq::gpu
