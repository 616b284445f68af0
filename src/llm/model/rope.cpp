#include "llm/model/rope.h"

#include <cmath>
#include <numbers>

#include "base/error.h"

namespace nvhcq::llm {

std::vector<float> llama3_rope_freq_factors(const RopeScaling& s, float freq_base, int n_rot) {
  const double low_wavelen = s.original_context / static_cast<double>(s.low_freq_factor);
  const double high_wavelen = s.original_context / static_cast<double>(s.high_freq_factor);
  std::vector<float> factors(static_cast<size_t>(n_rot / 2));
  for (int i = 0; i < n_rot / 2; ++i) {
    const double freq = std::pow(static_cast<double>(freq_base), -2.0 * i / n_rot);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double f;
    if (wavelen < high_wavelen) {
      f = 1.0;
    } else if (wavelen > low_wavelen) {
      f = s.factor;
    } else {
      const double smooth = (s.original_context / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      f = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    factors[static_cast<size_t>(i)] = static_cast<float>(f);
  }
  return factors;
}

Rope::Rope(const ModelConfig& c, std::span<const float> freq_factors)
    : n_rot_(static_cast<int>(c.n_rot)), style_(c.rope_style) {
  std::vector<float> factors(freq_factors.begin(), freq_factors.end());
  if (factors.empty() && c.rope_scaling.kind == RopeScaling::Kind::kLlama3) {
    factors = llama3_rope_freq_factors(c.rope_scaling, c.rope_freq_base, n_rot_);
  }
  if (!factors.empty() && factors.size() != static_cast<size_t>(n_rot_ / 2)) {
    throw FormatError("RoPE frequency factors: " + std::to_string(factors.size()) + " values for " +
                      std::to_string(n_rot_ / 2) + " frequencies");
  }
  const double linear =
      c.rope_scaling.kind == RopeScaling::Kind::kLinear ? 1.0 / c.rope_scaling.factor : 1.0;
  inv_freq_.resize(static_cast<size_t>(n_rot_ / 2));
  for (int i = 0; i < n_rot_ / 2; ++i) {
    double f = std::pow(static_cast<double>(c.rope_freq_base), -2.0 * i / n_rot_) * linear;
    if (!factors.empty()) f /= factors[static_cast<size_t>(i)];
    inv_freq_[static_cast<size_t>(i)] = f;
  }
}

void Rope::angles(int64_t pos, float* cos_sin) const {
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    const double theta = static_cast<double>(pos) * inv_freq_[i];
    cos_sin[2 * i] = static_cast<float>(std::cos(theta));
    cos_sin[2 * i + 1] = static_cast<float>(std::sin(theta));
  }
}

void Rope::apply(float* x, int n_heads, int head_dim, const float* cos_sin) const {
  const int half = n_rot_ / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    if (style_ == RopeStyle::kNormal) {
      for (int i = 0; i < half; ++i) {
        const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * c - b * s;
        v[2 * i + 1] = a * s + b * c;
      }
    } else {
      for (int i = 0; i < half; ++i) {
        const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
        const float a = v[i], b = v[i + half];
        v[i] = a * c - b * s;
        v[i + half] = a * s + b * c;
      }
    }
  }
}

}  // namespace nvhcq::llm
