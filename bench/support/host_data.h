#pragma once
// Host-side data for the benchmarks' correctness checks: fast deterministic
// random inputs, f16/bf16 rounding, and comparisons against float64 references
// (relative Frobenius error, non-finite values counted).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gemm_plan.h"

namespace nvhcq::bench {

// splitmix64: fast, deterministic, good enough for test data.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }

 private:
  uint64_t state_;
};

// A matrix or vector in one element type, with the exact values it holds as
// floats (what a float64 reference must start from).
struct HostTensor {
  kernels::GemmType type = kernels::GemmType::kF32;
  std::vector<float> values;   // exactly representable in `type`
  std::vector<uint8_t> bytes;  // what is uploaded
  size_t size() const { return values.size(); }
};

// n values uniform in [lo, hi), rounded to `type`.
HostTensor random_tensor(kernels::GemmType type, size_t n, uint64_t seed, float lo = -1.0f,
                         float hi = 1.0f);
// Device bytes of `type` -> floats.
std::vector<float> decode(kernels::GemmType type, const std::vector<uint8_t>& bytes, size_t n);
// floats -> bytes of `type` (round to nearest even).
std::vector<uint8_t> encode(kernels::GemmType type, const std::vector<float>& values);

struct Agreement {
  double rel_error = 0;  // ||got - ref|| / ||ref|| over the compared entries
  size_t compared = 0;
  size_t non_finite = 0;  // got entries that are NaN or infinite
  bool ok(double tolerance) const { return non_finite == 0 && rel_error <= tolerance; }
  std::string describe() const;
};

// Row-major C = A * B checked in float64 at every entry when m*n*k <= full_limit,
// otherwise at `samples` random entries plus the whole last row and last column
// (the edge tiles).
Agreement check_gemm(const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c, uint32_t m, uint32_t n, uint32_t k,
                     uint64_t full_limit = uint64_t{1} << 28, size_t samples = 4096);

// Relative Frobenius error a kernel of `type` with f32 accumulation may have at
// depth k: f32 rounding grows like sqrt(k); 16-bit outputs round once.
double gemm_tolerance(kernels::GemmType type, uint32_t k);

}  // namespace nvhcq::bench
