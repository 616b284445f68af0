// Tensor-level stress (label stress): a minute of the same matmul, whose result
// must not change by a bit (and matches float64 once), and half a minute of
// tensors of random sizes made and dropped, after which the process holds no
// more file descriptors, mappings or memory than after its warm-up. On "nv",
// "cuda" and "cpu". NVHCQ_STRESS_SECONDS shortens both.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cases/robust_suite.h"
#include "support/process_resources.h"
#include "tensor/gpu_test_devices.h"
#include "tensor/tensor.h"

namespace nvhcq::testing {
namespace {

using tensor::DType;
using tensor::Tensor;
using Clock = std::chrono::steady_clock;

class TensorStress : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why = tensor::test_device_unusable(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  const std::string& device() const { return GetParam(); }
  bool gpu() const { return device() != "cpu"; }
};

TEST_P(TensorStress, SustainedMatmulHasNoDrift) {
  const auto duration = stress_duration(std::chrono::seconds(60));
  const int64_t n = gpu() ? 2048 : 256;
  Tensor a = Tensor::randn({n, n}, 11, DType::kF32, device()).realize();
  Tensor b = Tensor::randn({n, n}, 12, DType::kF32, device()).realize();
  const std::vector<float> first = a.matmul(b).to_vector<float>();
  // Once: the result against float64 on sample rows.
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (int64_t i : {int64_t{0}, n / 3, n - 1}) {
    for (int64_t j = 0; j < n; j += 97) {
      double want = 0, mag = 0;
      for (int64_t k = 0; k < n; ++k) {
        want += static_cast<double>(av[i * n + k]) * bv[k * n + j];
        mag += std::fabs(static_cast<double>(av[i * n + k]) * bv[k * n + j]);
      }
      ASSERT_NEAR(first[i * n + j], want, 1e-5 * mag + 1e-6)
          << "element (" << i << ", " << j << ")";
    }
  }
  auto start = Clock::now();
  uint64_t iterations = 0;
  while (Clock::now() - start < duration) {
    const std::vector<float> again = a.matmul(b).to_vector<float>();
    ++iterations;
    for (size_t e = 0; e < again.size(); ++e) {
      if (std::memcmp(&again[e], &first[e], 4) != 0) {
        FAIL() << "iteration " << iterations << " after "
               << std::chrono::duration<double>(Clock::now() - start).count() << " s: element " << e
               << " is " << again[e] << ", was " << first[e];
      }
    }
  }
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "%s: %llu matmuls of %lldx%lld (f32) in %.1f s, all bit-identical (%.1f GFLOP/s incl. "
      "readback)\n",
      device().c_str(), static_cast<unsigned long long>(iterations), static_cast<long long>(n),
      static_cast<long long>(n), s, 2.0 * n * n * n * iterations / s / 1e9);
  EXPECT_GT(iterations, 0u);
}

TEST_P(TensorStress, TensorChurnOfRandomSizesLeaksNothing) {
  const auto duration = stress_duration(std::chrono::seconds(30));
  const auto warm_up = duration / 5;
  const int64_t max_elements = gpu() ? (int64_t{1} << 22) : (int64_t{1} << 18);
  std::mt19937_64 rng(42);
  auto start = Clock::now();
  ProcessResources baseline, peak;
  bool measuring = false;
  uint64_t iterations = 0;
  while (Clock::now() - start < duration) {
    if (!measuring && Clock::now() - start >= warm_up) {
      baseline = peak = ProcessResources::now();
      measuring = true;
    }
    // A random shape of up to max_elements, values 0 or 1: sums are exact.
    const int rank = 1 + static_cast<int>(rng() % 3);
    tensor::Shape shape;
    int64_t budget = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_elements));
    for (int d = 0; d < rank; ++d) {
      int64_t extent = d + 1 == rank ? budget : 1 + static_cast<int64_t>(rng() % 64);
      extent = std::max<int64_t>(1, std::min(extent, budget));
      shape.push_back(extent);
      budget = std::max<int64_t>(1, budget / extent);
    }
    const int64_t v = static_cast<int64_t>(rng() % 2);
    const DType t = rng() % 2 ? DType::kF32 : DType::kI32;
    Tensor x = Tensor::full(shape, v, t, device());
    Tensor y = (x * 2 + 1).sum();
    int64_t numel = 1;
    for (int64_t e : shape) numel *= e;
    ASSERT_EQ(y.item<double>(), static_cast<double>(numel * (2 * v + 1)))
        << "iteration " << iterations;
    if (iterations % 8 == 0) {  // and a matmul of odd sizes now and then
      const int64_t m = 1 + rng() % 200, k = 1 + rng() % 200, n = 1 + rng() % 200;
      Tensor p = Tensor::ones({m, k}, DType::kF32, device())
                     .matmul(Tensor::ones({k, n}, DType::kF32, device()));
      ASSERT_EQ(p.sum().item<double>(), static_cast<double>(m * k * n));
    }
    ++iterations;
    if (measuring && iterations % 64 == 0) {
      ProcessResources now = ProcessResources::now();
      peak.rss_kib = std::max(peak.rss_kib, now.rss_kib);
      peak.vm_kib = std::max(peak.vm_kib, now.vm_kib);
    }
  }
  ProcessResources after = ProcessResources::now();
  std::printf(
      "%s: %llu iterations in %.0f s; after warm-up: %s; peak RSS %.1f MiB, peak VM %.1f MiB\n",
      device().c_str(), static_cast<unsigned long long>(iterations),
      std::chrono::duration<double>(Clock::now() - start).count(),
      ProcessResources::change(baseline, after).c_str(), peak.rss_kib / 1024.0,
      peak.vm_kib / 1024.0);
  ASSERT_TRUE(measuring);
  EXPECT_LE(after.fds, baseline.fds) << "file descriptors grow";
  EXPECT_LE(after.maps, baseline.maps + 16) << "mappings grow";
  EXPECT_LE(after.vm_kib, baseline.vm_kib + 512 * 1024) << "address space grows";
  EXPECT_LE(after.rss_kib, baseline.rss_kib + 128 * 1024) << "resident memory grows";
}

INSTANTIATE_TEST_SUITE_P(Devices, TensorStress, ::testing::Values("nv", "cuda", "cpu"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nvhcq::testing
