// CPU references shared by the LLM kernel emulation tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/half.h"
#include "kernels/llm_formats.cuh"
#include "llm/quant/blocks.h"
#include "llm/quant/quant_rows.h"

namespace nvhcq::llm {

// The input as the decode products normalize it (kernels/llm_act_prep.cuh):
// scale = 1 / sqrt(mean(x^2) + eps) with the sum of squares in double and the
// rest in float (llm_rms_scale), then (x * scale) * w, each product rounded to
// float.
inline std::vector<float> rms_normalized(const std::vector<float>& x, const std::vector<float>& w, float eps) {
  double ss = 0.0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const float scale = llm_rms_scale(ss, static_cast<int>(x.size()), eps);
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    volatile float xs = x[i] * scale;
    volatile float xw = xs * w[i];
    out[i] = xw;
  }
  return out;
}

// What a launch hands over for `x` (kernels/llm_handoff.cuh): per group of 32
// the CPU's Q8_1.
struct HandoffReference {
  std::vector<int8_t> q;
  std::vector<float> d, s;
  std::vector<int> sums;
};
inline HandoffReference handoff_reference(const std::vector<float>& x) {
  const size_t groups = x.size() / 32;
  HandoffReference r;
  r.q.resize(x.size());
  for (size_t g = 0; g < groups; ++g) {
    BlockQ8_1 b;
    quantize_row_q8_1(x.data() + 32 * g, &b, 32);
    int sum = 0;
    for (int i = 0; i < 32; ++i) sum += (r.q[32 * g + i] = b.qs[i]);
    r.d.push_back(cpu::half_to_float(b.d));
    r.s.push_back(cpu::half_to_float(b.s));
    r.sums.push_back(sum);
  }
  return r;
}

// A hand-off's arrays (the q8x32 ActView of kernels/llm_act_prep.cuh over its
// bytes) against the reference, field by field.
template <class View>
void expect_handoff(const HandoffReference& want, const View& v, const std::string& what) {
  for (size_t g = 0; g < want.d.size(); ++g) {
    for (size_t i = 0; i < 32; ++i) ASSERT_EQ(v.q[32 * g + i], want.q[32 * g + i]) << what << " group " << g;
    EXPECT_EQ(v.d[g], want.d[g]) << what << " group " << g;
    EXPECT_EQ(v.s[g], want.s[g]) << what << " group " << g;
    EXPECT_EQ(v.sum[g], want.sums[g]) << what << " group " << g;
  }
}

}  // namespace nvhcq::llm
