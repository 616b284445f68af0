// The lessons the predecessor paid for on a real Orin (../shared/seeds), each as
// a test that fails when its fix is taken out. The simulator delays the GPU
// (entry latency) where a race is involved, so the race happens every time.

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "drv/tegra/nvmap_abi.h"
#include "gpu/queue.h"
#include "sim/sim_tegra.h"
#include "sim/sim_test_util.h"

namespace nvhcq::sim {
namespace {

using gpu::Buffer;
using gpu::ComputeQueue;
using gpu::CopyQueue;
using gpu::KernelArgs;
using gpu::LaunchDims;
using gpu::Signal;

class Lessons : public SimDeviceTest {};
class TegraLessons : public SimDeviceTest {};

// Seed bug 1 (val=198 instead of 200): signals were released through the fields
// of a QMD the CPU rewrote for the next submission while the GPU was still to
// read it. Signals are released from the pushbuffer; nothing in flight changes.
TEST_P(Lessons, SignalsAreReleasedFromThePushbufferNotFromQmds) {
  open();
  sim().options().entry_latency_us = 300;
  gpu::Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  Signal s = dev->new_signal(0);
  sim().stats().reset();
  for (uint64_t i = 0; i < 100; ++i) {
    ComputeQueue()
        .wait(s, i)
        .exec(inc, KernelArgs().add(counter), LaunchDims{})
        .exec(inc, KernelArgs().add(counter), LaunchDims{})
        .signal(s, i + 1)
        .submit(*dev);
  }
  dev->wait(s, 100);
  EXPECT_EQ(read_u32(counter, 1)[0], 200u);
  EXPECT_EQ(sim().stats().qmd_releases.load(), 0u) << "a QMD released a semaphore";
  EXPECT_GE(sim().stats().host_releases.load(), 200u) << "user signal + timeline per submission";
  EXPECT_EQ(sim().stats().launches.load(), 200u);
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

// Seed bug (JIT tests segfaulting after ~27): kernel arguments came from a bump
// allocator that ran off its mapping. They come from a ring reclaimed by
// timeline value: thousands of launches and re-submitted recordings through a
// tiny ring, while the GPU lags behind, reuse nothing the GPU may still read.
TEST_P(Lessons, KernelArgumentsAreReclaimedByTimelineValue) {
  gpu::DeviceOptions o;
  o.kernarg_ring_bytes = 16 << 10;
  o.command_ring_bytes = 16 << 10;
  open(o);
  sim().options().entry_latency_us = 200;
  gpu::Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  for (int i = 0; i < 1500; ++i) {
    ComputeQueue().exec(inc, KernelArgs().add(counter), LaunchDims{}).submit(*dev);
  }
  ComputeQueue captured;  // a recording replayed like a graph
  captured.exec(inc, KernelArgs().add(counter), LaunchDims{})
      .exec(inc, KernelArgs().add(counter), LaunchDims{});
  for (int i = 0; i < 1000; ++i) captured.submit(*dev);
  dev->synchronize();
  EXPECT_EQ(read_u32(counter, 1)[0], 3500u);
  EXPECT_GT(dev->kernargs().waits(), 10u) << "the ring never had to wait: it was not exercised";
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

// The predecessor's map() was a no-op, so copies to and from the caller's
// memory went nowhere. map_host really maps: the copy engine and a kernel both
// reach the caller's pages.
TEST_P(Lessons, MapHostReallyMapsTheCallersPages) {
  open();
  const size_t n = 2 * 4096;
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, n), 0);
  auto* mine = static_cast<uint32_t*>(raw);
  for (size_t i = 0; i < n / 4; ++i) mine[i] = static_cast<uint32_t>(i * 2654435761u);
  {
    Buffer mapped = dev->map_host(mine, n);
    EXPECT_EQ(mapped.cpu(), raw);
    Buffer gpu = dev->alloc(n);
    CopyQueue().copy(gpu.va(), mapped.va(), n).submit(*dev);
    dev->synchronize();
    EXPECT_EQ(read_u32(gpu, 5)[4], 4u * 2654435761u);
    gpu::Program store = load("store_to");
    ComputeQueue()
        .exec(store, KernelArgs().ptr(mapped.va() + 40).add(0xfeedu), LaunchDims{})
        .submit(*dev);
    dev->synchronize();
    EXPECT_EQ(mine[10], 0xfeedu) << "the kernel's store did not land in the caller's memory";
  }
  std::free(raw);
}

// Seed P0 (MISALIGNED_ADDR in a zero-fill kernel): nvgpu put a buffer inside the
// shared-memory window, where the SM does not see global memory. The windows
// are reserved before any allocation, so even a buffer large enough to need
// the space below them lands clear of them, and kernels can use all of it.
TEST_P(TegraLessons, ShaderWindowsAreReservedBeforeAnyAllocation) {
  open();
  auto as = sim().tegra().last_address_space();
  ASSERT_TRUE(as);
  const auto& w = dev->windows();
  EXPECT_EQ(w.local, 0xFD00000000ull);
  EXPECT_EQ(w.shared, 0xFE00000000ull);
  EXPECT_TRUE(as->inside_reservation(w.local, gpu::hw::ShaderWindows::kSize));
  EXPECT_TRUE(as->inside_reservation(w.shared, gpu::hw::ShaderWindows::kSize));
  // More than the VA space above the windows holds (the seed's LLaMA load).
  const size_t big = (4ull << 30) + (64 << 20);
  Buffer b = dev->alloc(big);
  bool overlaps = b.va() < w.shared + gpu::hw::ShaderWindows::kSize && w.local < b.va() + b.size();
  EXPECT_FALSE(overlaps) << "buffer at 0x" << std::hex << b.va() << " overlaps the shader windows";
  gpu::Program store = load("store_to");
  for (uint64_t off : {uint64_t{0}, uint64_t{big / 2}, uint64_t{big - 4}}) {
    ComputeQueue()
        .exec(store, KernelArgs().ptr(b.va() + off).add(0x5eedu), LaunchDims{})
        .submit(*dev);
  }
  dev->synchronize();
  EXPECT_EQ(b.cpu_as<uint32_t>()[0], 0x5eedu);
  EXPECT_EQ(b.cpu_as<uint32_t>()[(big - 4) / 4], 0x5eedu);
}

// Seed D0: on unified memory, copies in and out are CPU copies of the buffer
// itself (no DMA staging), made only once the GPU is done with it.
TEST_P(TegraLessons, UnifiedMemoryCopiesAreCpuCopiesAfterSynchronize) {
  open();
  sim().options().entry_latency_us = 3000;  // the GPU is always behind
  const uint32_t n = 4096;
  gpu::Program fill = load("affine_fill"), add = load("add_f32");
  Buffer x = dev->alloc(n * 4), y = dev->alloc(n * 4), z = dev->alloc(n * 4);
  std::vector<float> ones(n, 1.0f), twos(n, 2.0f), back(n);
  dev->upload(x, 0, ones.data(), n * 4);
  dev->upload(y, 0, twos.data(), n * 4);
  dev->synchronize();
  sim().stats().reset();
  LaunchDims d;
  d.grid[0] = n / 128;
  d.block[0] = 128;
  // Copy-out right after a launch: it must wait for the kernel.
  ComputeQueue().exec(fill, KernelArgs().add(z).add(3.0f).add(1.0f).add(n), d).submit(*dev);
  dev->download(back.data(), z, 0, n * 4);
  EXPECT_EQ(back[n - 1], 3.0f * (n - 1) + 1.0f) << "copy-out did not wait for the GPU";
  // Copy-in right after a launch that reads the buffer: it must not change what
  // the kernel reads.
  ComputeQueue().exec(add, KernelArgs().add(z).add(x).add(y).add(n), d).submit(*dev);
  std::vector<float> tens(n, 10.0f);
  dev->upload(x, 0, tens.data(), n * 4);
  dev->download(back.data(), z, 0, n * 4);
  EXPECT_EQ(back[7], 3.0f) << "copy-in overwrote a buffer a queued kernel was to read";
  EXPECT_EQ(sim().stats().dma_copies.load(), 0u)
      << "unified memory was copied through the copy engine";
}

// Shader local memory is replaced only when no kernel can still be using it.
// Seen on the H200 (driver 580): now and then the GPU misses a doorbell and
// leaves written GPFIFO entries unfetched while it idles, so a wait would never
// end. A wait that sees no progress rings the doorbell of such a channel again.
TEST_P(Lessons, AMissedDoorbellIsRungAgainByTheWait) {
  open();
  gpu::Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  dev->synchronize();
  sim().stats().reset();
  sim().options().drop_doorbells = 1;
  Signal s = dev->new_signal(0);
  ComputeQueue().exec(inc, KernelArgs().add(counter), LaunchDims{}).signal(s, 1).submit(*dev);
  auto start = std::chrono::steady_clock::now();
  dev->wait(s, 1, std::chrono::milliseconds(2000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_EQ(sim().options().drop_doorbells.load(), 0) << "the first doorbell was dropped";
  EXPECT_GE(sim().stats().doorbells.load(), 1u) << "and a second one rung";
  EXPECT_EQ(read_u32(counter, 1)[0], 1u);
}

TEST_P(Lessons, LocalMemoryIsReallocatedOnlyAfterSynchronize) {
  open();
  sim().options().entry_latency_us = 3000;
  gpu::Program fill = load("affine_fill");  // little local memory
  Buffer a = dev->alloc(256 * 4), b = dev->alloc(256 * 4);
  LaunchDims d;
  d.block[0] = 256;
  ComputeQueue().exec(fill, KernelArgs().add(a).add(1.0f).add(5.0f).add(256u), d).submit(*dev);
  uint32_t before = dev->local_memory_per_thread();
  gpu::Program walk = load("local_memory_walk");  // more: the local memory is replaced
  EXPECT_GT(dev->local_memory_per_thread(), before);
  ComputeQueue().exec(walk, KernelArgs().add(b).add(3u), d).submit(*dev);
  dev->synchronize();
  std::vector<float> va(256);
  dev->download(va.data(), a, 0, 256 * 4);
  EXPECT_EQ(va[255], 260.0f);
  EXPECT_NE(read_u32(b, 1)[0], 0u);
}

// Seed bug 2: every nvmap allocation carries a nonzero tag in flags[31:16] (the
// kernel warns for each one that does not; the simulator refuses it).
TEST_P(TegraLessons, NvmapAllocationsCarryATag) {
  open();
  Buffer big = dev->alloc(16 << 20);
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, 4096), 0);
  { Buffer host = dev->map_host(raw, 4096); }
  std::free(raw);
  auto allocs = sim().tegra().allocs();
  ASSERT_GT(allocs.size(), 5u);
  bool saw_from_va = false;
  for (const auto& a : allocs) {
    EXPECT_NE(drv::tegra::nvmap_tag_bits(a.flags), 0u)
        << "an untagged nvmap allocation of " << a.size;
    saw_from_va |= a.from_va;
  }
  EXPECT_TRUE(saw_from_va);
  EXPECT_EQ(sim().log().count("without an allocation tag"), 0u);
}

// Large nvmap allocations are 2 MiB aligned (and sized), small ones page aligned.
TEST_P(TegraLessons, LargeNvmapAllocationsAre2MiBAligned) {
  open();
  Buffer big = dev->alloc((8 << 20) + 1);
  Buffer small = dev->alloc(12345);
  EXPECT_EQ(big.va() % (2 << 20), 0u);
  EXPECT_EQ(big.size(), 10u << 20);
  for (const auto& a : sim().tegra().allocs()) {
    if (a.from_va) continue;
    if (a.size >= (8u << 20)) {
      EXPECT_EQ(a.align, 2u << 20) << "allocation of " << a.size;
    } else {
      EXPECT_EQ(a.align, 4096u) << "allocation of " << a.size;
    }
  }
}

// Seed Run 1, fix 3: write-combined pushbuffers raise PBDMA/SKED errors on
// Orin. Every nvmap allocation (pushbuffers, rings, QMDs) is cacheable, and the
// simulated host engine refuses anything else.
TEST_P(TegraLessons, PushbuffersAreCacheable) {
  open();
  gpu::Program fill = load("affine_fill");
  Buffer out = dev->alloc(64 * 4);
  ComputeQueue()
      .exec(fill, KernelArgs().add(out).add(1.0f).add(0.0f).add(64u),
            LaunchDims{{1, 1, 1}, {64, 1, 1}, 0})
      .submit(*dev);
  dev->synchronize();
  for (const auto& a : sim().tegra().allocs()) {
    EXPECT_EQ(a.flags & drv::tegra::NVMAP_HANDLE_CACHE_FLAG, drv::tegra::NVMAP_HANDLE_CACHEABLE)
        << "allocation of " << a.size << " has caching " << (a.flags & 3);
  }
  EXPECT_EQ(sim().log().count("PBDMA"), 0u);
}

// GPFIFO entries are never overwritten before the GPU consumed them, even with
// a tiny ring and a slow GPU.
TEST_P(Lessons, GpfifoEntriesAreNotOverwrittenBeforeTheyAreConsumed) {
  gpu::DeviceOptions o;
  o.compute_ring_entries = 8;
  o.copy_ring_entries = 8;
  open(o);
  gpu::Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  // The GPU lags 2 ms behind each submission: the 8-entry ring fills however
  // slowly a loaded CI machine runs the CPU side.
  sim().options().entry_latency_us = 2000;
  for (int i = 0; i < 40; ++i) {
    ComputeQueue().exec(inc, KernelArgs().add(counter), LaunchDims{}).submit(*dev);
  }
  dev->synchronize();
  EXPECT_EQ(read_u32(counter, 1)[0], 40u) << "submissions were lost";
  EXPECT_GT(dev->channel(drv::Engine::kCompute).gpfifo->stalls(), 0u) << "the ring never filled up";
  EXPECT_TRUE(sim().log().violations().empty()) << sim().log().violations().front();
}

INSTANTIATE_TEST_SUITE_P(Sim, Lessons, ::testing::Values("rm", "tegra"), param_name);
INSTANTIATE_TEST_SUITE_P(Sim, TegraLessons, ::testing::Values("tegra"), param_name);

}  // namespace
}  // namespace nvhcq::sim
