// Quantize -> dequantize on seeded data: error bounds per format, special rows
// (constant, all-zero, zero-crossing, outliers, tiny, huge, NaN), and golden
// checksums of the quantized bytes.
//
// The golden checksums pin our reference quantizers bit for bit. They were
// recorded from this code after its output was compared byte for byte with
// llama.cpp's quantize_row_*_ref (ggml d99724f2, built as llama.cpp builds
// ggml-base) on these inputs and on 12 other distributions (0 bytes differ); a
// change in rounding, evaluation order or FMA contraction breaks them.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "llm/ggml_type.h"
#include "llm/quant/quant_registry.h"
#include "llm/quant/quant_rows.h"

namespace nvhcq::llm {
namespace {

// splitmix64; normal-ish values as the (exact, in double) Irwin-Hall sum of four
// uniforms, so the inputs are identical on every platform and libm.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  float normal() {
    const double sum = uniform() + uniform() + uniform() + uniform();
    return static_cast<float>((sum - 2.0) * 1.7320508075688772);  // unit variance
  }
};

std::vector<float> normal_row(uint64_t seed, int64_t n, float scale = 1.0f) {
  Rng rng{seed};
  std::vector<float> x(n);
  for (auto& v : x) v = rng.normal() * scale;
  return x;
}

const GgmlType kAllTypes[] = {GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                              GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1,
                              GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                              GgmlType::Q6_K, GgmlType::Q8_K};

std::string name(GgmlType t) {
  return std::string(traits(t).name);
}

std::vector<float> round_trip(GgmlType t, const std::vector<float>& x) {
  const QuantOps& ops = quant_ops(t);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> q(ops.row_bytes(n), 0xa5);  // poison
  std::vector<float> y(x.size(), -9999.0f);
  ops.from_float(x.data(), q.data(), n);
  ops.to_float(q.data(), y.data(), n);
  return y;
}

double relative_rmse(const std::vector<float>& x, const std::vector<float>& y) {
  double err = 0, energy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
    energy += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(err / energy);
}

struct Bound {
  GgmlType type;
  double normal, uniform;  // bounds on rmse(error) / rms(data)
};

// Measured on these inputs (printed by the test), bounds 15-25% above them:
//         f16     bf16   q4_0  q4_1  q5_0  q5_1  q8_0   q2_K  q3_K  q4_K  q5_K  q6_K  q8_K
// normal  .00021  .0017  .082  .076  .041  .037  .0051  .286  .145  .069  .035  .017  .0061
// uniform .00018  .0015  .065  .061  .031  .029  .0038  .233  .125  .055  .028  .013  .0039
const Bound kBounds[] = {
    {GgmlType::F16, 0.00025, 0.00025}, {GgmlType::BF16, 0.002, 0.002},
    {GgmlType::Q4_0, 0.10, 0.076},     {GgmlType::Q4_1, 0.09, 0.072},
    {GgmlType::Q5_0, 0.05, 0.037},     {GgmlType::Q5_1, 0.045, 0.035},
    {GgmlType::Q8_0, 0.0064, 0.0045},  {GgmlType::Q8_1, 0.0064, 0.0045},
    {GgmlType::Q2_K, 0.34, 0.27},      {GgmlType::Q3_K, 0.18, 0.15},
    {GgmlType::Q4_K, 0.083, 0.064},    {GgmlType::Q5_K, 0.042, 0.033},
    {GgmlType::Q6_K, 0.021, 0.016},    {GgmlType::Q8_K, 0.0082, 0.0047},
};

TEST(QuantRoundTrip, ErrorWithinBoundOnNormalAndUniformData) {
  const int64_t n = 256 * 64;
  const std::vector<float> normal = normal_row(1, n);
  Rng rng{2};
  std::vector<float> uniform(n);
  for (auto& v : uniform) v = static_cast<float>(rng.uniform() * 2 - 1);
  for (const Bound& b : kBounds) {
    const double e_normal = relative_rmse(normal, round_trip(b.type, normal));
    const double e_uniform = relative_rmse(uniform, round_trip(b.type, uniform));
    std::cout << "  " << name(b.type) << ": rmse/rms normal " << e_normal << ", uniform "
              << e_uniform << "\n";
    EXPECT_LT(e_normal, b.normal) << name(b.type);
    EXPECT_LT(e_uniform, b.uniform) << name(b.type);
    EXPECT_GT(e_normal, 0.0) << name(b.type) << ": lossless on random data is suspicious";
  }
}

// For the 32-element formats the worst case per block is known: half a step
// (a whole step at Q4_0/Q5_0's clipped positive end), plus the rounding of d and m to f16.
TEST(QuantRoundTrip, PerBlockMaxErrorOfLegacyFormats) {
  const std::vector<float> x = normal_row(3, 32 * 512, 2.0f);
  struct Case {
    GgmlType type;
    double steps;  // allowed error, in steps of the block
    int levels;  // steps across the block: amax / step for symmetric, range / step for min formats
    bool with_min;
  };
  for (const Case& c : {Case{GgmlType::Q4_0, 1.0, 8, false}, Case{GgmlType::Q5_0, 1.0, 16, false},
                        Case{GgmlType::Q8_0, 0.5, 127, false}, Case{GgmlType::Q4_1, 0.5, 15, true},
                        Case{GgmlType::Q5_1, 0.5, 31, true}}) {
    const std::vector<float> y = round_trip(c.type, x);
    for (size_t b = 0; b < x.size() / 32; ++b) {
      float amax = 0, mn = x[32 * b], mx = x[32 * b];
      for (int j = 0; j < 32; ++j) {
        amax = std::max(amax, std::fabs(x[32 * b + j]));
        mn = std::min(mn, x[32 * b + j]);
        mx = std::max(mx, x[32 * b + j]);
      }
      const double step = (c.with_min ? (mx - mn) : amax) / c.levels;
      // f16 rounding of d moves the top level by <= levels * step * 2^-11; of m by |min| * 2^-11.
      const double slack = amax * 0x1p-10;
      for (int j = 0; j < 32; ++j) {
        ASSERT_LE(std::fabs(y[32 * b + j] - x[32 * b + j]), c.steps * step + slack)
            << name(c.type) << " block " << b << " element " << j;
      }
    }
  }
}

TEST(QuantRoundTrip, AllZeroRowStaysExactlyZero) {
  const std::vector<float> zeros(512, 0.0f);
  for (GgmlType t : kAllTypes) {
    const std::vector<float> y = round_trip(t, zeros);
    for (float v : y) ASSERT_EQ(v, 0.0f) << name(t);
  }
}

TEST(QuantRoundTrip, ConstantRowsAreNearlyExact) {
  for (float c : {0.7f, -3.25f, 40.0f}) {
    const std::vector<float> x(512, c);
    for (GgmlType t : kAllTypes) {
      const std::vector<float> y = round_trip(t, x);
      // Every format represents a constant block up to the f16/bf16 rounding of its
      // scales (bf16 keeps 8 bits: 2^-9 relative; f16 scales 2^-11, times a few levels).
      // (Constants so small that K-format sub-scales fall into f16's subnormals lose
      // more; TinyAndHugeMagnitudesStayFinite covers them.)
      const double bound = std::fabs(c) * 0x1p-8;
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_LE(std::fabs(y[i] - c), bound) << name(t) << " c=" << c << " i=" << i;
      }
    }
  }
}

TEST(QuantRoundTrip, ZeroCrossingRampAndOutliers) {
  // A ramp through zero: error bound as for random data of the same rms.
  std::vector<float> ramp(1024);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = -1.0f + 2.0f * i / (ramp.size() - 1);
  for (const Bound& b : kBounds) {
    EXPECT_LT(relative_rmse(ramp, round_trip(b.type, ramp)), b.uniform * 1.2) << name(b.type);
  }
  // One large outlier per 256 values: its block degrades, other blocks do not care, and
  // the outlier itself is kept within its format's step.
  std::vector<float> x = normal_row(4, 256 * 8);
  for (size_t i = 0; i < x.size(); i += 256) x[i + 77] = 100.0f;
  for (const Bound& b : kBounds) {
    const std::vector<float> y = round_trip(b.type, x);
    for (size_t i = 0; i < x.size(); i += 256) {
      EXPECT_NEAR(y[i + 77], 100.0f, 100.0f * 0.1) << name(b.type);  // Q2_K: 1/3-level steps
    }
    for (float v : y) ASSERT_TRUE(std::isfinite(v)) << name(b.type);
  }
}

TEST(QuantRoundTrip, TinyAndHugeMagnitudesStayFinite) {
  // Scales below f16's range flush to zero: the data come back as zeros (error <= |x|).
  const std::vector<float> tiny = normal_row(5, 512, 1e-9f);
  // Large but representable scales: errors stay relative.
  const std::vector<float> large = normal_row(6, 512, 1000.0f);
  for (const Bound& b : kBounds) {
    const std::vector<float> yt = round_trip(b.type, tiny);
    for (size_t i = 0; i < tiny.size(); ++i) {
      ASSERT_TRUE(std::isfinite(yt[i])) << name(b.type);
      ASSERT_LE(std::fabs(yt[i] - tiny[i]), std::fabs(tiny[i]) * 1.0001 + 1e-12) << name(b.type);
    }
    EXPECT_LT(relative_rmse(large, round_trip(b.type, large)), b.normal * 1.5) << name(b.type);
  }
}

TEST(QuantRoundTrip, NaNInOneBlockLeavesOtherBlocksAlone) {
  for (GgmlType t : kAllTypes) {
    const QuantOps& ops = quant_ops(t);
    const int64_t n = 512;  // two K super-blocks, 16 small blocks
    std::vector<float> x = normal_row(7, n);
    std::vector<uint8_t> clean(ops.row_bytes(n)), dirty(ops.row_bytes(n));
    ops.from_float(x.data(), clean.data(), n);
    x[3] = NAN;
    x[5] = INFINITY;
    ops.from_float(x.data(), dirty.data(), n);  // must not crash; block 0 is garbage as in ggml
    const size_t first_clean_byte = ops.row_bytes(256);
    EXPECT_TRUE(
        std::equal(clean.begin() + first_clean_byte, clean.end(), dirty.begin() + first_clean_byte))
        << name(t);
  }
}

TEST(QuantRoundTrip, RowsQuantizeIndependently) {
  // Quantizing 3 rows in one call equals quantizing them one by one (what a threaded
  // quantizer relies on).
  const int64_t n = 512;
  const std::vector<float> x = normal_row(8, 3 * n);
  for (GgmlType t : kAllTypes) {
    const QuantOps& ops = quant_ops(t);
    std::vector<uint8_t> whole(ops.row_bytes(3 * n)), parts(ops.row_bytes(3 * n));
    ops.from_float(x.data(), whole.data(), 3 * n);
    for (int r = 0; r < 3; ++r)
      ops.from_float(x.data() + r * n, parts.data() + r * ops.row_bytes(n), n);
    EXPECT_EQ(whole, parts) << name(t);
  }
}

// The registry's Q8_0/Q8_1 quantizers (AVX2 on capable CPUs) write exactly the
// reference bytes: ties, zeros, huge and tiny values, infinities and NaNs included.
TEST(QuantRoundTrip, ActivationQuantizersWriteReferenceBytes) {
  std::vector<float> x = normal_row(9, 32 * 64, 5.0f);
  for (int j = 0; j < 32; ++j) x[j] = (j % 2 ? -1.0f : 1.0f) * (j * 4 + 0.5f);  // d = 1: exact ties
  x[0] = 127.0f;
  for (int j = 32; j < 64; ++j) x[j] = 0.0f;                       // all-zero block
  for (int j = 64; j < 96; ++j) x[j] = 1e-40f * (j - 80);          // subnormal inputs
  for (int j = 96; j < 128; ++j) x[j] = 3e38f * ((j % 3) - 1.0f);  // near float max
  x[130] = INFINITY;
  x[170] = NAN;
  x[200] = -NAN;
  x[205] = 2.0f;
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<BlockQ8_0> ref0(n / 32), got0(n / 32);
  quantize_row_q8_0(x.data(), ref0.data(), n);
  quant_ops(GgmlType::Q8_0).from_float(x.data(), got0.data(), n);
  EXPECT_EQ(0, std::memcmp(ref0.data(), got0.data(), ref0.size() * sizeof(BlockQ8_0)));
  std::vector<BlockQ8_1> ref1(n / 32), got1(n / 32);
  quantize_row_q8_1(x.data(), ref1.data(), n);
  quant_ops(GgmlType::Q8_1).from_float(x.data(), got1.data(), n);
  EXPECT_EQ(0, std::memcmp(ref1.data(), got1.data(), ref1.size() * sizeof(BlockQ8_1)));
  EXPECT_EQ(ref0[0].qs[1], -5);  // -4.5 rounds away from zero
  EXPECT_EQ(ref0[0].qs[2], 9);   // 8.5 too
}

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// The golden input: 16 super-blocks of assorted shapes (normal at several scales,
// all-positive, a zero block, sparse values, outliers, a constant block).
std::vector<float> golden_input() {
  const int64_t n = 256 * 16;
  std::vector<float> x(n);
  Rng rng{20240601};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t blk = i / 256;
    float v = rng.normal();
    switch (blk % 8) {
      case 0:
        break;
      case 1:
        v *= 0.02f;
        break;
      case 2:
        v = std::fabs(v) + 0.25f;
        break;
      case 3:
        v = 0.0f;
        break;
      case 4:
        v = (i % 5 == 0) ? v : 0.0f;
        break;
      case 5:
        v = (i % 61 == 0) ? 8.0f * v : 0.1f * v;
        break;
      case 6:
        v = 1.5f;
        break;
      default:
        v *= 300.0f;
        break;
    }
    x[i] = v;
  }
  return x;
}

TEST(QuantRoundTrip, GoldenChecksumsOfReferenceQuantizers) {
  struct Golden {
    GgmlType type;
    uint64_t hash;
  };
  const Golden kGolden[] = {
      {GgmlType::Q4_0, 0xe73e140271f643e2ull}, {GgmlType::Q4_1, 0x8f1508f1ae49f467ull},
      {GgmlType::Q5_0, 0x39b5b0e3e3f82b6eull}, {GgmlType::Q5_1, 0x0a1642fac95d1becull},
      {GgmlType::Q8_0, 0x28f3d06f4b7b011full}, {GgmlType::Q8_1, 0x72efa826a60de560ull},
      {GgmlType::Q2_K, 0x45e96a86a6706f2eull}, {GgmlType::Q3_K, 0x6f3962960841e669ull},
      {GgmlType::Q4_K, 0xca28fd71e2384f4dull}, {GgmlType::Q5_K, 0x2bcae27705988376ull},
      {GgmlType::Q6_K, 0x371c2750a34fc130ull}, {GgmlType::Q8_K, 0xb6a73423826cfa75ull},
      {GgmlType::F16, 0xc56abc49e5708e9dull},  {GgmlType::BF16, 0x3e1294a5664d3d61ull},
  };
  const std::vector<float> x = golden_input();
  for (const Golden& g : kGolden) {
    const QuantOps& ops = quant_ops(g.type);
    std::vector<uint8_t> q(ops.row_bytes(static_cast<int64_t>(x.size())));
    ops.from_float(x.data(), q.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(fnv1a(q), g.hash) << name(g.type) << std::hex << " got 0x" << fnv1a(q);
  }
}

}  // namespace
}  // namespace nvhcq::llm
