// HcqEdges: the runtime at its limits, on a real GPU or a simulated one. Every
// test checks values: addresses against the driver's VA limit, memory exhaustion
// ending in OutOfMemoryError with the device still working, no fd or mapping
// growth over 1,000 alloc/free cycles, byte-exact copies of every size class,
// GPFIFO and argument-ring wraparound, stale caches, the largest grids.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "cases/robust_suite.h"
#include "gpu/hw/arch.h"
#include "support/process_resources.h"

namespace nvhcq::testing {
namespace {

using namespace nvhcq::gpu;  // NOLINT: the suite exercises this layer only

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

uint64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(256, '\n');
  }
  return 8 * kGiB;
}

struct VaRange {
  uint64_t va, size;
  std::string what;
};

TEST_P(HcqEdges, EveryAddressLiesInsideTheDriversVaLimit) {
  const drv::GpuInfo& gi = dev->info();
  ASSERT_GT(gi.va_limit, 0u);
  std::vector<Buffer> buffers;
  std::vector<VaRange> ranges;
  for (size_t size : {size_t{4096}, size_t{kMiB}, size_t{2 * kMiB + 1}, size_t{64 * kMiB}}) {
    buffers.push_back(dev->alloc(size));
    buffers.push_back(dev->alloc(size, true));
  }
  buffers.push_back(dev->alloc_host(4096));
  buffers.push_back(dev->alloc_host(kMiB));
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, 64 * 1024), 0);
  {
    buffers.push_back(dev->map_host(raw, 64 * 1024));
    for (const Buffer& b : buffers) {
      ranges.push_back(
          {b.va(), b.size(), (b.is_host() ? "host " : "device ") + std::to_string(b.size())});
    }
    Signal s = dev->new_signal(0);
    ranges.push_back({s.va(), 16, "signal"});
    Program p = load("affine_fill");
    ranges.push_back({p.code_va(), p.kernel().text_size, "kernel code"});

    const hw::ShaderWindows& w = dev->windows();
    for (const VaRange& r : ranges) {
      EXPECT_NE(r.va, 0u) << r.what;
      EXPECT_LE(r.va + r.size, gi.va_limit) << r.what << " at 0x" << std::hex << r.va;
      for (uint64_t window : {w.local, w.shared}) {
        EXPECT_FALSE(r.va < window + hw::ShaderWindows::kSize && window < r.va + r.size)
            << r.what << " at 0x" << std::hex << r.va << " overlaps a shader window at 0x"
            << window;
      }
      if (gi.unified_memory) {
        EXPECT_LT(r.va + r.size, 1ull << 40) << r.what << ": Tegra's GPU VA space is 40 bits";
      }
    }
    std::vector<VaRange> by_va(ranges.begin(), ranges.end() - 2);  // the buffers
    std::sort(by_va.begin(), by_va.end(),
              [](const VaRange& a, const VaRange& b) { return a.va < b.va; });
    for (size_t i = 1; i < by_va.size(); ++i) {
      EXPECT_GE(by_va[i].va, by_va[i - 1].va + by_va[i - 1].size)
          << by_va[i - 1].what << " and " << by_va[i].what << " overlap";
    }
    buffers.clear();
  }
  std::free(raw);
}

TEST_P(HcqEdges, ProgressiveAllocationEndsInOutOfMemoryAndTheDeviceStillWorks) {
  // Bounded: a discrete GPU stops at its memory (an H200 has 141 GiB) or 512 GiB;
  // unified memory (Jetson) at half of what the OS has free, so the OOM killer
  // stays out of it; the simulator, whose memory is unbounded, at 2 GiB.
  const uint64_t cap = !real()                      ? 2 * kGiB
                       : dev->info().unified_memory ? mem_available_bytes() / 2
                                                    : 512 * kGiB;
  Program fill = load("affine_fill");
  Buffer probe = dev->alloc(256 * 4);
  poison(probe);  // also makes the staging buffer downloads use, before memory runs out
  std::vector<Buffer> held;
  uint64_t total = 0;
  std::string oom;
  auto try_alloc = [&](uint64_t bytes) {
    try {
      held.push_back(dev->alloc(bytes));
      total += bytes;
      return true;
    } catch (const OutOfMemoryError& e) {
      oom = e.what();
      return false;
    }
  };
  uint64_t size = kMiB;
  auto start = std::chrono::steady_clock::now();
  while (total + size <= cap && try_alloc(size)) size *= 2;
  const bool exhausted = !oom.empty();
  if (exhausted) {
    // Fill what is left with ever smaller pieces, down to 1 MiB.
    for (uint64_t s = size / 2; s >= kMiB && total + s <= cap;) {
      if (!try_alloc(s)) s /= 2;
    }
  }
  std::printf("allocated %.2f GiB in %zu buffers in %.1f s; %s\n",
              static_cast<double>(total) / kGiB, held.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              exhausted ? ("then: " + oom).c_str() : "the cap was reached first");
  if (exhausted) {
    EXPECT_NE(oom.find("memory"), std::string::npos)
        << "the message should say what ran out: " << oom;
  }
  // With memory exhausted, launches still run: commands and arguments live in
  // rings allocated when the device opened.
  ComputeQueue()
      .exec(fill, KernelArgs().add(probe).add(2.0f).add(1.0f).add(256u), dims_1d(256))
      .submit(*dev);
  dev->synchronize();
  EXPECT_FLOAT_EQ(read<float>(probe, 256)[255], 511.0f);
  // An impossible request is an OutOfMemoryError, not a crash or another error.
  EXPECT_THROW(dev->alloc(1ull << 50), OutOfMemoryError);
  held.clear();
  Buffer again = dev->alloc(64 * kMiB);
  poison(again);
  ComputeQueue()
      .exec(fill, KernelArgs().add(again).add(1.0f).add(-3.0f).add(4096u), dims_1d(4096))
      .submit(*dev);
  dev->synchronize();
  auto v = read<float>(again, 4096);
  for (uint32_t i = 0; i < 4096; i += 511) ASSERT_FLOAT_EQ(v[i], i - 3.0f) << i;
}

TEST_P(HcqEdges, AThousandAllocFreeCyclesLeakNoFdsOrMappings) {
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, 3 * 4096), 0);
  uint64_t checksum = 0;
  auto cycle = [&](uint32_t i) {
    Buffer a = dev->alloc(kMiB);
    Buffer b = dev->alloc(64 * 1024, true);
    Buffer c = dev->alloc_host(4096);
    Buffer d = dev->map_host(raw, 3 * 4096);
    Signal s = dev->new_signal(i);
    b.cpu_as<uint32_t>()[0] = i;  // the CPU mappings are real
    c.cpu_as<uint32_t>()[1] = i;
    checksum += b.cpu_as<uint32_t>()[0] + c.cpu_as<uint32_t>()[1] + s.value() + (a.va() != 0);
    if (i % 10 == 0) checksum += load("increment").code_va() != 0;
  };
  for (uint32_t i = 0; i < 20; ++i) cycle(i);  // pools and caches reach their size
  checksum = 0;
  ProcessResources before = ProcessResources::now();
  const uint32_t n = 1000;
  for (uint32_t i = 0; i < n; ++i) cycle(i);
  ProcessResources after = ProcessResources::now();
  std::printf("%u alloc/free cycles: %s\n", n, ProcessResources::change(before, after).c_str());
  EXPECT_EQ(checksum, 3ull * (n * (n - 1) / 2) + n + n / 10);
  EXPECT_EQ(after.fds, before.fds) << "file descriptors leak";
  // A leak per cycle would add hundreds; allocators may add a few of their own.
  EXPECT_LE(after.maps, before.maps + 16) << "mappings leak";
  EXPECT_LE(after.vm_kib, before.vm_kib + 64 * 1024) << "address space leaks";
  std::free(raw);
}

TEST_P(HcqEdges, CopyEngineCopiesOfEverySizeClassAreByteExact) {
  std::vector<uint64_t> sizes = {1, 4, 16, 64, 4096, 64 * 1024, kMiB, 16 * kMiB, 256 * kMiB};
  if (!real()) sizes.pop_back();  // the simulator copies with the CPU: 16 MiB says as much
  const uint64_t guard = 64;
  for (uint64_t n : sizes) {
    // Aligned, and at odd offsets on both sides.
    for (auto [src_off, dst_off] : {std::pair<uint64_t, uint64_t>{0, 0}, {3, 5}}) {
      Buffer src = dev->alloc(n + guard), dst = dev->alloc(n + 2 * guard);
      std::vector<uint8_t> data(n + guard);
      fill_pattern(data.data(), data.size(), n * 7 + src_off);
      dev->upload(src, 0, data.data(), data.size());
      poison(dst);
      CopyQueue().copy(dst.va() + dst_off, src.va() + src_off, n).submit(*dev);
      dev->synchronize();
      std::vector<uint8_t> back = read<uint8_t>(dst, n + 2 * guard);
      size_t bad = 0, first = SIZE_MAX;
      for (size_t i = 0; i < back.size(); ++i) {
        bool inside = i >= dst_off && i < dst_off + n;
        uint8_t want = inside ? data[i - dst_off + src_off] : 0xcd;
        if (back[i] != want) {
          if (first == SIZE_MAX) first = i;
          ++bad;
        }
      }
      ASSERT_EQ(bad, 0u) << "copy of " << n << " bytes (src +" << src_off << ", dst +" << dst_off
                         << "): " << bad << " wrong bytes, first at " << first
                         << (first < dst_off || first >= dst_off + n ? " (outside the copy)" : "");
    }
  }
}

TEST_P(HcqEdges, GpfifoAndArgumentRingsWrapAroundManyTimes) {
  DeviceOptions o;
  o.compute_ring_entries = 32;
  o.copy_ring_entries = 32;
  o.command_ring_bytes = 256 * 1024;
  o.kernarg_ring_bytes = 256 * 1024;
  reopen(o);
  Program inc = load("increment"), fill = load("affine_fill");
  Buffer counter = dev->alloc(4096), shadow = dev->alloc(4096);
  uint32_t zero = 0;
  dev->upload(counter, 0, &zero, 4);
  Signal s = dev->new_signal(0);
  // Compute and copy alternate, each waiting for the other: > 6 laps of each ring.
  const uint64_t n = 32 * 12 + 5;
  for (uint64_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      ComputeQueue()
          .wait(s, i)
          .exec(inc, KernelArgs().add(counter), LaunchDims{})
          .memory_barrier()
          .signal(s, i + 1)
          .submit(*dev);
    } else {
      CopyQueue().wait(s, i).copy(shadow.va(), counter.va(), 4).signal(s, i + 1).submit(*dev);
    }
  }
  dev->wait(s, n);
  EXPECT_EQ(s.value(), n);
  EXPECT_EQ(read<uint32_t>(counter, 1)[0], (n + 1) / 2);
  EXPECT_EQ(read<uint32_t>(shadow, 1)[0], n / 2)
      << "the last copy saw the count before the last launch";
  EXPECT_GE(dev->channel(drv::Engine::kCompute).gpfifo->submitted(), (n + 1) / 2);

  // 1,000 launches with distinct arguments through a 256 KiB argument ring: each
  // region must hold what its own launch was given, not a later launch's.
  const uint32_t launches = 1000, per = 64;
  Buffer out = dev->alloc(uint64_t{launches} * per * 4);
  poison(out);
  for (uint32_t i = 0; i < launches; ++i) {
    ComputeQueue()
        .exec(fill,
              KernelArgs()
                  .add(out, uint64_t{i} * per * 4)
                  .add(static_cast<float>(i))
                  .add(1.0f)
                  .add(per),
              dims_1d(per, 64))
        .submit(*dev);
  }
  dev->synchronize();
  EXPECT_GT(dev->kernargs().waits(), 0u)
      << "the argument ring never wrapped: the test is too small";
  auto v = read<float>(out, uint64_t{launches} * per);
  for (uint32_t i = 0; i < launches; ++i) {
    for (uint32_t j = 0; j < per; j += 21) {
      ASSERT_FLOAT_EQ(v[uint64_t{i} * per + j], static_cast<float>(i) * j + 1.0f) << "launch " << i;
    }
  }
}

TEST_P(HcqEdges, WriteComputeReadModifyRecomputeReadSeesNoStaleData) {
  const uint32_t n = 4096;
  Program add = load("add_f32");
  // x is written through the copy engine, y through the CPU's mapping.
  Buffer x = dev->alloc(n * 4), y = dev->alloc(n * 4, true), z = dev->alloc(n * 4),
         w = dev->alloc(n * 4);
  std::vector<float> xs(n), ys(n);
  for (int round = 0; round < 6; ++round) {
    // Rounds 0-3 rewrite everything, 4-5 only the first half of x.
    const uint32_t changed = round < 4 ? n : n / 2;
    for (uint32_t i = 0; i < n; ++i) {
      if (i < changed) xs[i] = static_cast<float>(round * 1000 + i);
      if (round < 4) ys[i] = static_cast<float>(round) * -0.5f + 0.25f * static_cast<float>(i % 64);
    }
    dev->upload(x, 0, xs.data(), changed * 4);
    if (round < 4) dev->upload(y, 0, ys.data(), n * 4);
    poison(z);
    poison(w);
    ComputeQueue().exec(add, KernelArgs().add(z).add(x).add(y).add(n), dims_1d(n)).submit(*dev);
    dev->synchronize();
    auto zs = read<float>(z, n);
    // The next kernel reads what the last one wrote (in another submission).
    ComputeQueue().exec(add, KernelArgs().add(w).add(z).add(x).add(n), dims_1d(n)).submit(*dev);
    dev->synchronize();
    auto ws = read<float>(w, n);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(zs[i], xs[i] + ys[i]) << "round " << round << ", element " << i << " (z = x + y)";
      ASSERT_EQ(ws[i], zs[i] + xs[i]) << "round " << round << ", element " << i << " (w = z + x)";
    }
  }
}

TEST_P(HcqEdges, LargestGridsAndBlocksRunAndLargerOnesAreRefused) {
  // A grid of 2^31 - 1 blocks takes seconds on a GPU: allow it minutes.
  if (real())
    reopen([] {
      DeviceOptions o;
      o.timeout = std::chrono::milliseconds(120000);
      return o;
    }());
  Program geo = load("report_geometry");
  Buffer out = dev->alloc(64);
  const hw::ArchParams& a = dev->arch();
  auto run = [&](LaunchDims d) {
    poison(out);
    ComputeQueue().exec(geo, KernelArgs().add(out), d).submit(*dev);
    dev->synchronize();
    auto g = read<uint32_t>(out, 6);
    EXPECT_EQ(g, (std::vector<uint32_t>{d.block[0], d.block[1], d.block[2], d.grid[0], d.grid[1],
                                        d.grid[2]}));
  };
  run(LaunchDims{{a.max_grid_x, 1, 1}, {1, 1, 1}, 0});
  run(LaunchDims{{1, a.max_grid_y, 1}, {1, 1, 1}, 0});
  run(LaunchDims{{1, 1, a.max_grid_z}, {1, 1, 1}, 0});
  run(LaunchDims{{2, 3, 4}, {geo.max_threads_per_block(), 1, 1}, 0});
  run(LaunchDims{{1, 1, 1}, {1, a.max_block_y, 1}, 0});
  run(LaunchDims{{1, 1, 1}, {16, 1, a.max_block_z}, 0});
  for (LaunchDims bad :
       {LaunchDims{{a.max_grid_x + 1u, 1, 1}, {1, 1, 1}, 0},
        LaunchDims{{1, a.max_grid_y + 1u, 1}, {1, 1, 1}, 0},
        LaunchDims{{1, 1, a.max_grid_z + 1u}, {1, 1, 1}, 0}, LaunchDims{{0, 1, 1}, {1, 1, 1}, 0},
        LaunchDims{{1, 1, 1}, {geo.max_threads_per_block() + 1, 1, 1}, 0},
        LaunchDims{{1, 1, 1}, {1, 1, a.max_block_z + 1}, 0},
        LaunchDims{{1, 1, 1}, {64, 64, 1}, 0}}) {
    EXPECT_THROW(ComputeQueue().exec(geo, KernelArgs().add(out), bad), Error)
        << "grid " << bad.grid[0] << "x" << bad.grid[1] << "x" << bad.grid[2] << ", block "
        << bad.block[0] << "x" << bad.block[1] << "x" << bad.block[2];
  }
  if (!real()) return;
  // On a GPU, every block of the largest grids runs exactly once.
  Program count = Program::from_source(
      *dev,
      "extern \"C\" __global__ void count_blocks(unsigned long long* n) {\n"
      "  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) atomicAdd(n, 1ull);\n"
      "}\n",
      "count_blocks.cu", "count_blocks");
  Buffer n = dev->alloc(8);
  for (LaunchDims d : {LaunchDims{{a.max_grid_x, 1, 1}, {32, 1, 1}, 0},
                       LaunchDims{{1, a.max_grid_y, 1}, {32, 1, 1}, 0},
                       LaunchDims{{1, 1, a.max_grid_z}, {32, 1, 1}, 0}}) {
    uint64_t zero = 0;
    dev->upload(n, 0, &zero, 8);
    auto t0 = std::chrono::steady_clock::now();
    ComputeQueue().exec(count, KernelArgs().add(n), d).submit(*dev);
    dev->synchronize();
    uint64_t blocks = uint64_t{d.grid[0]} * d.grid[1] * d.grid[2];
    std::printf("grid %ux%ux%u: %.2f s\n", d.grid[0], d.grid[1], d.grid[2],
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_EQ(read<uint64_t>(n, 1)[0], blocks);
  }
}

TEST_P(HcqEdges, RandomLaunchGeometriesEitherRunCorrectlyOrAreRefused) {
  Program geo = load("report_geometry");
  Buffer out = dev->alloc(64);
  const hw::ArchParams& a = dev->arch();
  std::mt19937 rng(20240611);
  const uint32_t blocks[] = {0, 1, 2, 3, 31, 32, 64, 65, 128, 512, 1024, 1025, 2048};
  // Only small valid grids: a random large grid could run for hours on a GPU.
  const uint32_t grids[] = {0, 1, 2, 7, 100, 65536, 0x80000000u, 0xffffffffu};
  int ran = 0, refused = 0;
  for (int round = 0; round < 80; ++round) {
    LaunchDims d;
    for (int i = 0; i < 3; ++i) {
      d.block[i] = blocks[rng() % std::size(blocks)];
      d.grid[i] = grids[rng() % std::size(grids)];
    }
    if (round % 2 == 0) {  // plenty of valid ones too
      const uint32_t small_grids[] = {1, 2, 7, 100};
      const uint32_t small_blocks[] = {1, 2, 3};
      for (int i = 0; i < 3; ++i) d.grid[i] = small_grids[rng() % std::size(small_grids)];
      d.block[1] = small_blocks[rng() % std::size(small_blocks)];
      d.block[2] = small_blocks[rng() % std::size(small_blocks)];
    }
    const uint64_t threads = uint64_t{d.block[0]} * d.block[1] * d.block[2];
    const uint64_t ctas = uint64_t{d.grid[0]} * d.grid[1] * d.grid[2];
    const bool valid = threads > 0 && ctas > 0 && d.block[0] <= a.max_block_x &&
                       d.block[1] <= a.max_block_y && d.block[2] <= a.max_block_z &&
                       threads <= geo.max_threads_per_block() && d.grid[0] <= a.max_grid_x &&
                       d.grid[1] <= a.max_grid_y && d.grid[2] <= a.max_grid_z;
    if (valid && ctas > (1u << 24)) continue;  // valid but too long to run here
    ComputeQueue q;
    if (!valid) {
      EXPECT_THROW(q.exec(geo, KernelArgs().add(out), d), Error) << "round " << round;
      ++refused;
      continue;
    }
    ASSERT_NO_THROW(q.exec(geo, KernelArgs().add(out), d)) << "round " << round;
    poison(out);
    q.submit(*dev);
    dev->synchronize();
    EXPECT_EQ(read<uint32_t>(out, 6), (std::vector<uint32_t>{d.block[0], d.block[1], d.block[2],
                                                             d.grid[0], d.grid[1], d.grid[2]}))
        << "round " << round;
    ++ran;
  }
  EXPECT_GT(ran, 5);
  EXPECT_GT(refused, 5);
  // Arguments: wrong count, wrong sizes, oversized structs.
  struct Big {
    uint8_t b[512];
  };
  EXPECT_THROW(ComputeQueue().exec(geo, KernelArgs(), LaunchDims{}), Error);
  EXPECT_THROW(ComputeQueue().exec(geo, KernelArgs().add(out).add(out), LaunchDims{}), Error);
  EXPECT_THROW(ComputeQueue().exec(geo, KernelArgs().add(1u), LaunchDims{}), Error);
  EXPECT_THROW(ComputeQueue().exec(geo, KernelArgs().add(Big{}), LaunchDims{}), Error);
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HcqEdges);

}  // namespace nvhcq::testing
