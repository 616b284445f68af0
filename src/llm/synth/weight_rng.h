#pragma once
// Seeded random weights, one independent stream per (seed, tensor, row): any row
// can be made on any thread in any order and comes out the same, so a synthetic
// model is identical for a seed whatever the thread count.
//
// Values are approximately normal: the sum of four 16-bit uniforms (Irwin-Hall),
// centred and scaled to unit variance. That is cheap (one splitmix64 step per
// value), bounded (|z| < 3.47, so no outlier wrecks a quantization block) and
// close enough to a Gaussian for weights whose values do not matter.

#include <cstdint>

namespace nvhcq::llm {

class WeightRng {
 public:
  WeightRng(uint64_t seed, uint64_t tensor, uint64_t row) {
    state_ = mix(seed ^ mix(tensor * 0x9e3779b97f4a7c15ull + 1) ^ mix(row + 0x632be59bd9b4e019ull));
  }

  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix(state_);
  }

  // Approximately N(0, 1).
  float normal() {
    const uint64_t r = next();
    const uint32_t sum = static_cast<uint32_t>(r & 0xffff) +
                         static_cast<uint32_t>((r >> 16) & 0xffff) +
                         static_cast<uint32_t>((r >> 32) & 0xffff) + static_cast<uint32_t>(r >> 48);
    // sum / 65536 has mean 2 and variance 4/12; rescale to mean 0, variance 1.
    constexpr float kScale = 1.7320508f / 65536.0f;
    return (static_cast<float>(sum) - 2.0f * 65536.0f) * kScale;
  }

  // Uniform in [lo, hi).
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * 0x1p-24f;
  }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace nvhcq::llm
