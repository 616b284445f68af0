// CPU references shared by the LLM kernel emulation tests.
#pragma once

#include <cmath>
#include <vector>

namespace nvhcq::llm {

// The input as the decode products normalize it (kernels/llm_act_prep.cuh):
// scale = 1 / sqrt(mean(x^2) + eps) with the sum of squares in double, then
// (x * scale) * w, each product rounded to float.
inline std::vector<float> rms_normalized(const std::vector<float>& x, const std::vector<float>& w, float eps) {
  double ss = 0.0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps));
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    volatile float xs = x[i] * scale;
    volatile float xw = xs * w[i];
    out[i] = xw;
  }
  return out;
}

}  // namespace nvhcq::llm
