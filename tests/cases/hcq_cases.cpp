// The HCQ runtime suite: signals, waits, launches, copies, barriers, updates and
// faults, on a real GPU or a simulated one. The semantics follow tinygrad's
// test/device/test_hcq.py; every test checks values, not just "no crash".

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "base/error.h"
#include "cases/hcq_suite.h"
#include "compile/compiler.h"
#include "gpu/code_heap.h"
#include "gpu/cubin.h"
#include "gpu/device.h"
#include "gpu/program.h"
#include "gpu/queue.h"
#include "support/kernel_log.h"
#include "support/process_resources.h"

namespace nvhcq::testing {

void HcqSuite::SetUp() {
  std::string why = GetParam().unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  dev = GetParam().open();
}

gpu::Program HcqSuite::load(const std::string& kernel) {
  return gpu::Program::embedded(*dev, "selftest.cu", kernel);
}

std::vector<float> HcqSuite::read_floats(const gpu::Buffer& b, size_t n) {
  std::vector<float> out(n);
  dev->download(out.data(), b, 0, n * sizeof(float));
  return out;
}

std::vector<uint32_t> HcqSuite::read_u32(const gpu::Buffer& b, size_t n) {
  std::vector<uint32_t> out(n);
  dev->download(out.data(), b, 0, n * sizeof(uint32_t));
  return out;
}

void HcqSuite::poison(const gpu::Buffer& b) {
  std::vector<uint8_t> junk(b.size(), 0xcd);
  dev->upload(b, 0, junk.data(), junk.size());
}

namespace {

using namespace nvhcq::gpu;  // NOLINT: the suite exercises this layer only

TEST_P(HcqSuite, SignalFromComputeAndCopy) {
  Signal s = dev->new_signal(0);
  ComputeQueue().signal(s, 0x1000).submit(*dev);
  dev->wait(s, 0x1000);
  EXPECT_EQ(s.value(), 0x1000u);
  CopyQueue().signal(s, 0x2000).submit(*dev);
  dev->wait(s, 0x2000);
  EXPECT_EQ(s.value(), 0x2000u);
}

TEST_P(HcqSuite, SignalUpdateChangesValueAndTarget) {
  Signal a = dev->new_signal(0), b = dev->new_signal(0);
  ComputeQueue q;
  q.signal(a, 0x1000);
  q.update_signal(0, b.va(), 0x1234);
  q.submit(*dev);
  dev->wait(b, 0x1234);
  EXPECT_EQ(b.value(), 0x1234u);
  EXPECT_EQ(a.value(), 0u) << "the original target must not be written";
}

TEST_P(HcqSuite, WaitForCpuSetSignal) {
  Signal gate = dev->new_signal(0), done = dev->new_signal(0);
  ComputeQueue().wait(gate, 1).signal(done, 1).submit(*dev);
  gate.set(1);
  dev->wait(done, 1);
  EXPECT_EQ(done.value(), 1u);
}

TEST_P(HcqSuite, WaitLateSetHoldsTheQueue) {
  Signal gate = dev->new_signal(0), done = dev->new_signal(0);
  ComputeQueue().wait(gate, 5).signal(done, 7).submit(*dev);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(done.value(), 0u) << "the GPU passed a wait whose signal was not set";
  gate.set(4);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.value(), 0u) << "4 >= 5 must not hold";
  gate.set(5);
  dev->wait(done, 7);
  EXPECT_EQ(done.value(), 7u);
}

TEST_P(HcqSuite, WaitUpdate) {
  Signal gate = dev->new_signal(0), other = dev->new_signal(3), done = dev->new_signal(0);
  CopyQueue q;
  q.wait(gate, 1).signal(done, 9);
  q.update_wait(0, other.va(), 3);  // now waits on a signal that is already 3
  q.submit(*dev);
  dev->wait(done, 9);
  EXPECT_EQ(done.value(), 9u);
}

TEST_P(HcqSuite, ExecOneKernel) {
  const uint32_t n = 1000;
  Program p = load("affine_fill");
  Buffer out = dev->alloc(n * sizeof(float));
  poison(out);
  LaunchDims d;
  d.grid[0] = (n + 127) / 128;
  d.block[0] = 128;
  ComputeQueue().exec(p, KernelArgs().add(out).add(2.5f).add(-7.0f).add(n), d).submit(*dev);
  dev->synchronize();
  auto v = read_floats(out, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(v[i], 2.5f * i - 7.0f) << "element " << i;
}

// Two devices of one GPU in one process (a test fixture's device beside a
// library's, say) each keep their own channels, memory and UVM registration.
TEST_P(HcqSuite, TwoDevicesOfOneGpuWorkSideBySide) {
  const uint32_t n = 4096;
  LaunchDims d;
  d.grid[0] = n / 128;
  d.block[0] = 128;
  Program p1 = load("affine_fill");
  Buffer out1 = dev->alloc(n * sizeof(float));
  poison(out1);
  {
    std::unique_ptr<Device> second = GetParam().open();
    Program p2 = Program::embedded(*second, "selftest.cu", "affine_fill");
    Buffer out2 = second->alloc(n * sizeof(float));
    std::vector<uint8_t> junk(out2.size(), 0xcd);
    second->upload(out2, 0, junk.data(), junk.size());
    ComputeQueue().exec(p1, KernelArgs().add(out1).add(1.5f).add(2.0f).add(n), d).submit(*dev);
    ComputeQueue().exec(p2, KernelArgs().add(out2).add(-3.0f).add(0.25f).add(n), d).submit(*second);
    dev->synchronize();
    second->synchronize();
    std::vector<float> v2(n);
    second->download(v2.data(), out2, 0, n * sizeof(float));
    auto v1 = read_floats(out1, n);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_FLOAT_EQ(v1[i], 1.5f * i + 2.0f) << "first device, element " << i;
      ASSERT_FLOAT_EQ(v2[i], -3.0f * i + 0.25f) << "second device, element " << i;
    }
  }  // the second device closes (its program and buffer first)
  ComputeQueue().exec(p1, KernelArgs().add(out1).add(0.5f).add(1.0f).add(n), d).submit(*dev);
  dev->synchronize();
  auto v1 = read_floats(out1, n);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(v1[i], 0.5f * i + 1.0f) << "after closing the second";
}

// Kernel images share a few chunks of code memory: loading hundreds of programs
// adds no mapping per program, and every program runs its own code.
TEST_P(HcqSuite, ProgramsShareCodeMemory) {
  const uint32_t n = 256;
  compile::CompileOptions options;
  options.arch = dev->info().arch();
  auto module = compile::compile_embedded("selftest.cu", options);
  auto before = ProcessResources::now();
  std::vector<Program> programs;
  for (int i = 0; i < 300; ++i) programs.emplace_back(*dev, module.cubin, "affine_fill");
  auto loaded = ProcessResources::now();
  // Each block: the image rounded to pages plus a guard page.
  const uint64_t block = (Cubin(module.cubin).image().size() + CodeHeap::kBlockAlign - 1) /
                             CodeHeap::kBlockAlign * CodeHeap::kBlockAlign +
                         CodeHeap::kGuardBytes;
  const size_t chunks = (300 * block + CodeHeap::kChunkBytes - 1) / CodeHeap::kChunkBytes;
  EXPECT_LE(dev->code_heap().chunks(), chunks + 1);
  // A mapping or two per chunk, not one per program (slack: malloc arenas and
  // libraries map and unmap as they please).
  EXPECT_LE(loaded.maps, before.maps + 2 * (chunks + 1) + 16)
      << ProcessResources::change(before, loaded);
  Buffer out = dev->alloc(n * sizeof(float));
  LaunchDims d;
  d.grid[0] = n / 128;
  d.block[0] = 128;
  for (size_t i : {size_t{0}, size_t{150}, programs.size() - 1}) {
    poison(out);
    const float slope = 0.5f + static_cast<float>(i);
    ComputeQueue()
        .exec(programs[i], KernelArgs().add(out).add(slope).add(1.0f).add(n), d)
        .submit(*dev);
    dev->synchronize();
    auto v = read_floats(out, n);
    for (uint32_t j = 0; j < n; ++j) ASSERT_FLOAT_EQ(v[j], slope * j + 1.0f) << "program " << i;
  }
  // Freed blocks are reused; the chunks do not grow when programs come and go.
  programs.erase(programs.begin(), programs.begin() + 200);
  for (int i = 0; i < 200; ++i) programs.emplace_back(*dev, module.cubin, "affine_fill");
  EXPECT_LE(dev->code_heap().chunks(), chunks + 1);
  poison(out);
  ComputeQueue()
      .exec(programs.back(), KernelArgs().add(out).add(3.0f).add(-1.0f).add(n), d)
      .submit(*dev);
  dev->synchronize();
  auto v = read_floats(out, n);
  for (uint32_t j = 0; j < n; ++j) ASSERT_FLOAT_EQ(v[j], 3.0f * j - 1.0f) << "a reused block";
}

TEST_P(HcqSuite, LaunchGeometryReachesTheKernel) {
  Program p = load("report_geometry");
  Buffer out = dev->alloc(64);
  poison(out);
  LaunchDims d;
  d.grid[0] = 3;
  d.grid[1] = 5;
  d.grid[2] = 7;
  d.block[0] = 32;
  d.block[1] = 4;
  d.block[2] = 2;
  ComputeQueue().exec(p, KernelArgs().add(out), d).submit(*dev);
  dev->synchronize();
  auto g = read_u32(out, 6);
  EXPECT_EQ(g, (std::vector<uint32_t>{32, 4, 2, 3, 5, 7}));
}

TEST_P(HcqSuite, ClusterLaunchPairsBlocksThatShareSharedMemory) {
  // A kernel compiled for clusters of two: the QMD counts its grid in clusters,
  // and the blocks of a cluster reach each other's shared memory.
  if (dev->info().sm_version < 0x900) GTEST_SKIP() << "thread-block clusters need sm_90";
  Program p = load("cluster_partners");
  ASSERT_EQ(p.cluster_dims()[0], 2u);
  constexpr uint32_t kBlocks = 264;
  Buffer out = dev->alloc(3 * kBlocks * 4);
  poison(out);
  LaunchDims d;
  d.grid[0] = kBlocks;
  d.block[0] = 64;
  ComputeQueue().exec(p, KernelArgs().add(out), d).submit(*dev);
  dev->synchronize();
  const auto v = read_u32(out, 3 * kBlocks);
  for (uint32_t b = 0; b < kBlocks; ++b) {
    ASSERT_EQ(v[3 * b], b % 2) << "rank of block " << b;
    ASSERT_EQ(v[3 * b + 1], kBlocks) << "gridDim.x counts blocks";
    ASSERT_EQ(v[3 * b + 2], b ^ 1u) << "what block " << b << "'s partner wrote";
  }
  LaunchDims odd = d;
  odd.grid[0] = kBlocks - 1;
  EXPECT_THROW(ComputeQueue().exec(p, KernelArgs().add(out), odd), Error) << "half a cluster";
}

TEST_P(HcqSuite, ExecTwoKernels100Times) {
  // The predecessor's QMD-reuse race showed up here as 198 instead of 200.
  Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  Signal s = dev->new_signal(0);
  LaunchDims one;
  for (uint64_t i = 0; i < 100; ++i) {
    ComputeQueue()
        .wait(s, i)
        .exec(inc, KernelArgs().add(counter), one)
        .exec(inc, KernelArgs().add(counter), one)
        .signal(s, i + 1)
        .submit(*dev);
  }
  dev->wait(s, 100);
  EXPECT_EQ(read_u32(counter, 1)[0], 200u);
}

TEST_P(HcqSuite, ExecUpdate) {
  const uint32_t n = 256;
  Program p = load("affine_fill");
  Buffer a = dev->alloc(n * 4), b = dev->alloc(n * 4);
  poison(a);
  poison(b);
  LaunchDims d;
  d.grid[0] = n / 64;
  d.block[0] = 64;
  ComputeQueue q;
  q.exec(p, KernelArgs().add(a).add(1.0f).add(0.0f).add(n), d);
  KernelArgs updated;
  updated.add(b).add(-3.0f).add(1.5f).add(n);
  q.update_exec(0, &updated, nullptr);
  q.submit(*dev);
  dev->synchronize();
  auto vb = read_floats(b, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(vb[i], -3.0f * i + 1.5f);
  auto va = read_floats(a, 1);
  uint32_t bits;
  std::memcpy(&bits, &va[0], 4);
  EXPECT_EQ(bits, 0xcdcdcdcdu) << "the launch before the update must not run";
}

TEST_P(HcqSuite, ExecUpdateFuzz) {
  Program p = load("report_geometry");
  Buffer out = dev->alloc(64);
  std::mt19937 rng(1234);
  ComputeQueue q;
  LaunchDims d;
  q.exec(p, KernelArgs().add(out), d);
  for (int round = 0; round < 20; ++round) {
    LaunchDims r;
    r.grid[0] = 1 + rng() % 300;
    r.grid[1] = 1 + rng() % 20;
    r.grid[2] = 1 + rng() % 3;
    r.block[0] = 1 + rng() % 64;
    r.block[1] = 1 + rng() % 8;
    r.block[2] = 1 + rng() % 2;
    q.update_exec(0, nullptr, &r);
    poison(out);
    q.submit(*dev);
    dev->synchronize();
    auto g = read_u32(out, 6);
    ASSERT_EQ(g, (std::vector<uint32_t>{r.block[0], r.block[1], r.block[2], r.grid[0], r.grid[1],
                                        r.grid[2]}))
        << "round " << round;
  }
}

TEST_P(HcqSuite, ResubmitRecordedQueue) {
  Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  Signal s = dev->new_signal(0);
  ComputeQueue q;
  q.wait(s, 0).exec(inc, KernelArgs().add(counter), LaunchDims{}).signal(s, 1);
  for (uint64_t i = 0; i < 50; ++i) {
    q.update_wait(0, s.va(), i);
    q.update_signal(2, s.va(), i + 1);
    q.submit(*dev);
  }
  dev->wait(s, 50);
  EXPECT_EQ(read_u32(counter, 1)[0], 50u);
}

TEST_P(HcqSuite, CopyDeviceToDevice) {
  const size_t n = 1 << 20;
  std::vector<uint8_t> data(n);
  std::iota(data.begin(), data.end(), 7);
  Buffer a = dev->alloc(n), b = dev->alloc(n);
  dev->upload(a, 0, data.data(), n);
  poison(b);
  CopyQueue().copy(b.va(), a.va(), n).submit(*dev);
  dev->synchronize();
  std::vector<uint8_t> back(n);
  dev->download(back.data(), b, 0, n);
  EXPECT_EQ(back, data);
}

TEST_P(HcqSuite, CopyLong) {
  const size_t n = 64 << 20;
  std::vector<uint32_t> data(n / 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint32_t>(i * 2654435761u);
  Buffer a = dev->alloc(n), b = dev->alloc(n);
  dev->upload(a, 0, data.data(), n);
  CopyQueue().copy(b.va(), a.va(), n).submit(*dev);
  dev->synchronize();
  std::vector<uint32_t> back(n / 4);
  dev->download(back.data(), b, 0, n);
  EXPECT_TRUE(back == data);
}

TEST_P(HcqSuite, CopyOver4GiB) {
  if (!GetParam().real_hardware) GTEST_SKIP() << "needs a real GPU's memory";
  const size_t n = (4ull << 30) + (8 << 20);  // crosses 32-bit sizes and the 2 GiB split
  Buffer a = dev->alloc(n), b = dev->alloc(n);
  std::vector<uint64_t> marks = {0, 1ull << 31, (4ull << 30) - 8, n - 8};
  for (uint64_t off : marks) {
    uint64_t v = off ^ 0x5a5a5a5a5a5a5a5aull;
    dev->upload(a, off, &v, 8);
  }
  CopyQueue().copy(b.va(), a.va(), n).submit(*dev);
  dev->synchronize();
  for (uint64_t off : marks) {
    uint64_t v = 0;
    dev->download(&v, b, off, 8);
    EXPECT_EQ(v, off ^ 0x5a5a5a5a5a5a5a5aull) << "at offset " << off;
  }
}

TEST_P(HcqSuite, UpdateCopy) {
  const size_t n = 4096;
  std::vector<uint8_t> x(n, 0x11), y(n, 0x22);
  Buffer a = dev->alloc(n), b = dev->alloc(n), c = dev->alloc(n);
  dev->upload(a, 0, x.data(), n);
  dev->upload(b, 0, y.data(), n);
  CopyQueue q;
  q.copy(c.va(), a.va(), n);
  q.update_copy(0, c.va(), b.va(), n);
  q.submit(*dev);
  dev->synchronize();
  std::vector<uint8_t> back(n);
  dev->download(back.data(), c, 0, n);
  EXPECT_EQ(back, y);
}

TEST_P(HcqSuite, MemoryBarrierBetweenDependentKernels) {
  const uint32_t n = 4096;
  Program fill = load("affine_fill"), add = load("add_f32");
  Buffer x = dev->alloc(n * 4), y = dev->alloc(n * 4), z = dev->alloc(n * 4);
  poison(z);
  LaunchDims d;
  d.grid[0] = n / 256;
  d.block[0] = 256;
  ComputeQueue()
      .exec(fill, KernelArgs().add(x).add(1.0f).add(0.0f).add(n), d)
      .exec(fill, KernelArgs().add(y).add(0.0f).add(3.0f).add(n), d)
      .memory_barrier()
      .exec(add, KernelArgs().add(z).add(x).add(y).add(n), d)
      .submit(*dev);
  dev->synchronize();
  auto v = read_floats(z, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(v[i], i + 3.0f) << i;
}

TEST_P(HcqSuite, MemoryBarrierBeforeCopy) {
  const uint32_t n = 1024;
  Program fill = load("affine_fill");
  Buffer x = dev->alloc(n * 4), y = dev->alloc(n * 4);
  poison(y);
  Signal s = dev->new_signal(0);
  LaunchDims d;
  d.grid[0] = n / 128;
  d.block[0] = 128;
  ComputeQueue()
      .exec(fill, KernelArgs().add(x).add(0.5f).add(1.0f).add(n), d)
      .memory_barrier()
      .signal(s, 1)
      .submit(*dev);
  CopyQueue().wait(s, 1).copy(y.va(), x.va(), n * 4).submit(*dev);
  dev->synchronize();
  auto v = read_floats(y, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(v[i], 0.5f * i + 1.0f) << i;
}

TEST_P(HcqSuite, TimelineSignalRollover) {
  // Values crossing 2^32 must keep comparing correctly (64-bit semaphores).
  uint64_t base = (1ull << 32) - 4;
  Signal s = dev->new_signal(base);
  for (uint64_t i = 0; i < 10; ++i) {
    ComputeQueue().wait(s, base + i).signal(s, base + i + 1).submit(*dev);
  }
  dev->wait(s, base + 10);
  EXPECT_EQ(s.value(), base + 10);
  CopyQueue().wait(s, base + 10).signal(s, (1ull << 40) + 3).submit(*dev);
  dev->wait(s, (1ull << 40) + 3);
  EXPECT_EQ(s.value(), (1ull << 40) + 3);
}

TEST_P(HcqSuite, SmallCopiesFromHostBuffer) {
  Buffer host = dev->alloc_host(4096);
  Buffer gpu = dev->alloc(4096);
  for (size_t size : {1u, 3u, 4u, 15u, 64u, 255u, 4096u}) {
    for (size_t i = 0; i < size; ++i)
      host.cpu_as<uint8_t>()[i] = static_cast<uint8_t>(i * 7 + size);
    poison(gpu);
    CopyQueue().copy(gpu.va(), host.va(), size).submit(*dev);
    dev->synchronize();
    std::vector<uint8_t> back(size);
    dev->download(back.data(), gpu, 0, size);
    for (size_t i = 0; i < size; ++i) {
      ASSERT_EQ(back[i], static_cast<uint8_t>(i * 7 + size)) << "size " << size << " byte " << i;
    }
    uint8_t after = 0;
    if (size < 4096) {
      dev->download(&after, gpu, size, 1);
      EXPECT_EQ(after, 0xcd) << "copy of " << size << " bytes wrote past its end";
    }
  }
}

TEST_P(HcqSuite, SmallCopiesThroughIntermediateBuffers) {
  Buffer src = dev->alloc_host(4096), mid = dev->alloc(4096), mid2 = dev->alloc(4096),
         dst = dev->alloc_host(4096);
  for (size_t size : {1u, 17u, 100u, 2048u}) {
    for (size_t i = 0; i < size; ++i) src.cpu_as<uint8_t>()[i] = static_cast<uint8_t>(255 - i);
    std::memset(dst.cpu(), 0, 4096);
    CopyQueue()
        .copy(mid.va(), src.va(), size)
        .copy(mid2.va(), mid.va(), size)
        .copy(dst.va(), mid2.va(), size)
        .submit(*dev);
    dev->synchronize();
    for (size_t i = 0; i < size; ++i) {
      ASSERT_EQ(dst.cpu_as<uint8_t>()[i], static_cast<uint8_t>(255 - i)) << size;
    }
  }
}

TEST_P(HcqSuite, SmallTransfersFromComputeOutputToHost) {
  Program fill = load("affine_fill");
  Buffer gpu = dev->alloc(4096), host = dev->alloc_host(4096);
  Signal s = dev->new_signal(0);
  ComputeQueue()
      .exec(fill, KernelArgs().add(gpu).add(1.0f).add(1.0f).add(3u), LaunchDims{})
      .signal(s, 1)
      .submit(*dev);
  // One thread writes element 0 only.
  CopyQueue().wait(s, 1).copy(host.va(), gpu.va(), 4).submit(*dev);
  dev->synchronize();
  EXPECT_FLOAT_EQ(host.cpu_as<float>()[0], 1.0f);
}

TEST_P(HcqSuite, MapCpuBufferToDevice) {
  const size_t n = 3 * 4096;
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, n), 0);
  auto* mine = static_cast<uint8_t*>(raw);
  for (size_t i = 0; i < n; ++i) mine[i] = static_cast<uint8_t>(i % 251);
  {
    Buffer mapped = dev->map_host(mine, n);
    Buffer gpu = dev->alloc(n);
    CopyQueue().copy(gpu.va(), mapped.va(), n).submit(*dev);
    dev->synchronize();
    std::vector<uint8_t> back(n);
    dev->download(back.data(), gpu, 0, n);
    EXPECT_EQ(0, std::memcmp(back.data(), mine, n));
    // And the other way: the GPU writes into the caller's memory.
    std::vector<uint8_t> pattern(n, 0x3c);
    dev->upload(gpu, 0, pattern.data(), n);
    CopyQueue().copy(mapped.va(), gpu.va(), n).submit(*dev);
    dev->synchronize();
    EXPECT_EQ(mine[0], 0x3c);
    EXPECT_EQ(mine[n - 1], 0x3c);
  }
  std::free(raw);
}

TEST_P(HcqSuite, SharedMemoryKernel) {
  const uint32_t block = 256, blocks = 40;
  Program p = load("block_sum");
  std::vector<float> in(block * blocks);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 17) - 8.0f;
  Buffer x = dev->alloc(in.size() * 4), out = dev->alloc(blocks * 4);
  dev->upload(x, 0, in.data(), in.size() * 4);
  poison(out);
  LaunchDims d;
  d.grid[0] = blocks;
  d.block[0] = block;
  d.dynamic_shared_bytes = block * 4;
  ComputeQueue().exec(p, KernelArgs().add(out).add(x), d).submit(*dev);
  dev->synchronize();
  auto v = read_floats(out, blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    double want = 0;
    for (uint32_t t = 0; t < block; ++t) want += in[b * block + t];
    ASSERT_FLOAT_EQ(v[b], static_cast<float>(want)) << "block " << b;
  }
}

// A kernel that meets at named barriers 1 and 2 runs only when its QMD grants
// the barriers the CUBIN says it uses (EIATTR_NUM_BARRIERS).
TEST_P(HcqSuite, NamedBarrierKernel) {
  const uint32_t blocks = 3;
  Program p = load("named_barrier_halves");
  std::vector<float> in(128 * blocks);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 23) - 11.0f;
  Buffer x = dev->alloc(in.size() * 4), out = dev->alloc(2 * blocks * 4);
  dev->upload(x, 0, in.data(), in.size() * 4);
  poison(out);
  LaunchDims d;
  d.grid[0] = blocks;
  d.block[0] = 128;
  ComputeQueue().exec(p, KernelArgs().add(out).add(x), d).submit(*dev);
  dev->synchronize();
  auto v = read_floats(out, 2 * blocks);
  for (uint32_t h = 0; h < 2 * blocks; ++h) {
    double want = 0;
    for (uint32_t t = 0; t < 64; ++t) want += in[h * 64 + t];
    ASSERT_FLOAT_EQ(v[h], static_cast<float>(want)) << "half " << h;
  }
}

TEST_P(HcqSuite, LocalMemoryKernel) {
  const uint32_t n = 512;
  Program p = load("local_memory_walk");
  Buffer out = dev->alloc(n * 4);
  poison(out);
  LaunchDims d;
  d.grid[0] = n / 128;
  d.block[0] = 128;
  const uint32_t seed = 99;
  ComputeQueue().exec(p, KernelArgs().add(out).add(seed), d).submit(*dev);
  dev->synchronize();
  auto v = read_u32(out, n);
  for (uint32_t t = 0; t < n; ++t) {
    uint32_t scratch[64];
    for (uint32_t i = 0; i < 64; ++i) scratch[i] = (seed + t) * (i + 1);
    uint32_t idx = (seed ^ t) & 63, acc = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      acc += scratch[idx];
      idx = (idx * 5 + 1) & 63;
    }
    ASSERT_EQ(v[t], acc) << "thread " << t;
  }
}

TEST_P(HcqSuite, ManyLaunchesInOneSubmission) {
  Program inc = load("increment");
  Buffer counter = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  ComputeQueue q;
  for (int i = 0; i < 1000; ++i) q.exec(inc, KernelArgs().add(counter), LaunchDims{});
  q.submit(*dev);
  dev->synchronize();
  EXPECT_EQ(read_u32(counter, 1)[0], 1000u) << "chained launches must each run once, in order";
}

TEST_P(HcqSuite, GpfifoRingWrapsAround) {
  // More submissions than ring entries: entries are reused only after the GPU consumed them.
  Signal s = dev->new_signal(0);
  uint64_t n = dev->options().compute_ring_entries + 100;
  for (uint64_t i = 0; i < n; ++i) ComputeQueue().signal(s, i + 1).submit(*dev);
  dev->wait(s, n);
  EXPECT_EQ(s.value(), n);
}

TEST_P(HcqSuite, WaitThatNeverCompletesTimesOutWithAnError) {
  Signal never = dev->new_signal(0), done = dev->new_signal(0);
  ComputeQueue().wait(never, 1).signal(done, 1).submit(*dev);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(dev->wait(done, 1, std::chrono::milliseconds(300)), GpuFaultError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  never.set(1);  // let the channel drain so the device closes cleanly
  dev->wait(done, 1);
}

TEST_P(HcqSuite, FaultingKernelRaisesAndDeviceReopens) {
  ExpectKernelLogXid(31);  // the MMU fault below is on purpose
  {
    // Scoped: the program's code buffer must go before the device it lives on.
    Program bad = load("store_to");
    // An address no allocation covers: the MMU faults.
    uint64_t wild = 0x00dead0000000000ull;
    ComputeQueue().exec(bad, KernelArgs().ptr(wild).add(7u), LaunchDims{}).submit(*dev);
    auto start = std::chrono::steady_clock::now();
    try {
      dev->synchronize();
      FAIL() << "a store to an unmapped address did not fault";
    } catch (const GpuFaultError& e) {
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
      std::string what = e.what();
      EXPECT_TRUE(what.find("Xid") != std::string::npos || what.find("fault") != std::string::npos)
          << what;
    }
    EXPECT_THROW(ComputeQueue().signal(dev->new_signal(0), 1).submit(*dev), GpuFaultError)
        << "a faulted device refuses new work";
  }
  // A fresh device works again.
  dev.reset();
  dev = GetParam().open();
  Program fill = load("affine_fill");
  Buffer out = dev->alloc(64 * 4);
  ComputeQueue()
      .exec(fill, KernelArgs().add(out).add(1.0f).add(2.0f).add(64u),
            LaunchDims{{1, 1, 1}, {64, 1, 1}, 0})
      .submit(*dev);
  dev->synchronize();
  EXPECT_FLOAT_EQ(read_floats(out, 64)[63], 65.0f);
}

TEST_P(HcqSuite, BadLaunchesAreRefusedBeforeReachingTheGpu) {
  Program p = load("affine_fill");
  Buffer out = dev->alloc(64);
  LaunchDims too_many;
  too_many.block[0] = 2048;
  EXPECT_THROW(ComputeQueue().exec(p, KernelArgs().add(out).add(1.f).add(1.f).add(1u), too_many),
               Error);
  EXPECT_THROW(ComputeQueue().exec(p, KernelArgs().add(out).add(1.f), LaunchDims{}), Error)
      << "wrong argument count";
  EXPECT_THROW(
      ComputeQueue().exec(p, KernelArgs().add(out).add(1.0).add(1.f).add(1u), LaunchDims{}), Error)
      << "a double where the kernel takes a float";
}

TEST_P(HcqSuite, ExecSpeedIsMeasured) {
  if (!GetParam().real_hardware) GTEST_SKIP() << "timing means nothing in the simulator";
  Program empty = load("empty_kernel");
  Signal s = dev->new_signal(0);
  std::vector<double> us;
  for (uint64_t i = 1; i <= 200; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    ComputeQueue().exec(empty, KernelArgs(), LaunchDims{}).signal(s, i).submit(*dev);
    dev->wait(s, i);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  RecordProperty("launch_roundtrip_p50_us", std::to_string(us[us.size() / 2]));
  std::printf("launch + signal round trip: p50 %.2f us, min %.2f us\n", us[us.size() / 2], us[0]);
  EXPECT_GT(us[0], 0.0);
}

TEST_P(HcqSuite, CopyBandwidthIsMeasured) {
  if (!GetParam().real_hardware) GTEST_SKIP() << "timing means nothing in the simulator";
  const size_t n = 256 << 20;
  Buffer a = dev->alloc(n), b = dev->alloc(n);
  Signal s = dev->new_signal(0);
  CopyQueue().copy(b.va(), a.va(), n).signal(s, 1).submit(*dev);
  dev->wait(s, 1);
  Signal t0 = dev->new_signal(0), t1 = dev->new_signal(0);
  CopyQueue().timestamp(t0).copy(b.va(), a.va(), n).timestamp(t1).signal(s, 2).submit(*dev);
  dev->wait(s, 2);
  double ns = static_cast<double>(t1.timestamp() - t0.timestamp());
  ASSERT_GT(ns, 0.0) << "timestamps must advance";
  double gbps = 2.0 * n / ns;  // bytes read + written per ns = GB/s
  std::printf("device-to-device copy 256 MiB: %.1f GB/s\n", gbps);
  EXPECT_GT(gbps, 1.0);
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HcqSuite);

}  // namespace nvhcq::testing
