#pragma once
// The robustness suites of the HCQ runtime, written once and run on real GPUs
// (test_gpu, test_stress) and on the simulated ones (test_sim):
//   HcqEdges  (edge_cases.cpp)   limits: VA placement, memory exhaustion, leaks,
//                                copy sizes, ring wraparound, stale caches, grids
//   HcqFaults (fault_cases.cpp)  faults and hangs raise nvhcq::Error promptly;
//                                the process and (a reopened) device go on
//   HcqStress (stress_cases.cpp) long runs: many kernels, deep pipelines,
//                                backpressure (label stress on a GPU; scaled down
//                                to a quick run on the simulator)
// Each backend instantiates them, e.g.
//   INSTANTIATE_TEST_SUITE_P(Rm, HcqEdges, ::testing::Values(rm_robust_backend()),
//                            robust_backend_name);

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/program.h"
#include "gpu/queue.h"
#include "support/robust_backend.h"

namespace nvhcq::testing {

class RobustSuite : public ::testing::TestWithParam<RobustBackend> {
 protected:
  void SetUp() override {
    std::string why = GetParam().unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
    dev = GetParam().open(gpu::DeviceOptions());
  }
  void TearDown() override { dev.reset(); }

  bool real() const { return GetParam().real_hardware; }
  // Closes the device and opens a fresh one (with other options).
  void reopen(const gpu::DeviceOptions& options = gpu::DeviceOptions()) {
    dev.reset();
    dev = GetParam().open(options);
  }
  gpu::Program load(const std::string& kernel) {
    return gpu::Program::embedded(*dev, "selftest.cu", kernel);
  }
  template <typename T>
  std::vector<T> read(const gpu::Buffer& b, size_t n, size_t offset = 0) {
    std::vector<T> out(n);
    dev->download(out.data(), b, offset, n * sizeof(T));
    return out;
  }
  void poison(const gpu::Buffer& b, uint8_t value = 0xcd) {
    std::vector<uint8_t> junk(b.size(), value);
    dev->upload(b, 0, junk.data(), junk.size());
  }
  // One block of `threads` threads per `per_block` elements.
  static gpu::LaunchDims dims_1d(uint32_t n, uint32_t block = 128) {
    gpu::LaunchDims d;
    d.block[0] = block;
    d.grid[0] = (n + block - 1) / block;
    return d;
  }

  std::unique_ptr<gpu::Device> dev;
};

class HcqEdges : public RobustSuite {};
class HcqFaults : public RobustSuite {};
class HcqStress : public RobustSuite {};

// ---- sizes of the long tests -------------------------------------------------
//
// NVHCQ_STRESS_SCALE (default 1) multiplies every count of the stress tests;
// NVHCQ_STRESS_SECONDS replaces every duration (e.g. 60 s of matmuls) with its
// value. The simulator runs each stress test at 1/50 of its count.

inline double stress_scale_from_env() {
  const char* e = std::getenv("NVHCQ_STRESS_SCALE");
  double s = e != nullptr ? std::atof(e) : 1.0;
  return s > 0 ? s : 1.0;
}

inline uint64_t stress_count(uint64_t full, bool real_hardware) {
  double n = static_cast<double>(full) * stress_scale_from_env() * (real_hardware ? 1.0 : 0.02);
  return n < 1 ? 1 : static_cast<uint64_t>(n);
}

inline std::chrono::seconds stress_duration(std::chrono::seconds full) {
  const char* e = std::getenv("NVHCQ_STRESS_SECONDS");
  if (e != nullptr && std::atoi(e) > 0) return std::chrono::seconds(std::atoi(e));
  return full;
}

// A fast deterministic byte pattern (splitmix64 of the index and a seed).
inline void fill_pattern(uint8_t* p, size_t n, uint64_t seed) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t z = (seed + i) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    std::memcpy(p + i, &z, 8);
  }
  for (; i < n; ++i) p[i] = static_cast<uint8_t>((seed >> (i % 8)) + i * 131);
}

}  // namespace nvhcq::testing
