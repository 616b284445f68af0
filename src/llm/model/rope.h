#pragma once
// Rotary position embedding. Each pair of dimensions (i, partner(i)) of a head is
// rotated by pos * inv_freq[i], with inv_freq[i] = base^(-2i/n_rot), divided by
// Llama-3's per-frequency factor and multiplied by a linear scale when the model
// has them. Dimensions past n_rot are left alone.
//
// Angles are computed in double (pos * inv_freq can reach 1e5 radians at long
// contexts, where float would lose the phase) and stored as float cos/sin.

#include <cstdint>
#include <span>
#include <vector>

#include "llm/model/model_config.h"

namespace nvhcq::llm {

class Rope {
 public:
  // `freq_factors`: the rope_freqs tensor (n_rot/2 values) or empty.
  Rope(const ModelConfig& config, std::span<const float> freq_factors);

  int n_rot() const { return n_rot_; }
  // cos_sin[2i] = cos(pos * inv_freq[i]), cos_sin[2i+1] = sin(...), i < n_rot/2.
  void angles(int64_t pos, float* cos_sin) const;
  // Rotates `n_heads` consecutive heads of `head_dim` values in place.
  void apply(float* x, int n_heads, int head_dim, const float* cos_sin) const;

  const std::vector<double>& inv_freq() const { return inv_freq_; }

 private:
  int n_rot_;
  RopeStyle style_;
  std::vector<double> inv_freq_;
};

// Llama-3's frequency factors from its rope_scaling parameters (what llama.cpp's
// converter writes as rope_freqs.weight): 1 for high frequencies, `factor` for
// low ones, a smooth blend between.
std::vector<float> llama3_rope_freq_factors(const RopeScaling& scaling, float freq_base, int n_rot);

}  // namespace nvhcq::llm
