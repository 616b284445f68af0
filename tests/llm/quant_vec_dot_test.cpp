// Dot products of every weight format, scalar and AVX2, against float64 dots of
// the dequantized weights and activations: exactly on data whose every partial
// sum is representable, within float accumulation error on random data.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "llm/ggml_type.h"
#include "llm/quant/blocks.h"
#include "llm/quant/half.h"
#include "llm/quant/quant_registry.h"
#include "llm/quant/simd.h"

namespace nvhcq::llm {
namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  float normal() {
    return static_cast<float>((uniform() + uniform() + uniform() + uniform() - 2.0) * 1.7320508);
  }
  int range(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
};

const GgmlType kWeightTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                                 GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                 GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                 GgmlType::Q6_K};

std::string name(GgmlType t) {
  return std::string(traits(t).name);
}

std::vector<float> to_float(GgmlType t, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> out(n, -777.0f);
  quant_ops(t).to_float(q.data(), out.data(), n);
  return out;
}

struct Dot {
  double exact;      // float64 dot of the dequantized rows
  double magnitude;  // sum of |products|, the scale of rounding errors
};

Dot reference_dot(const std::vector<float>& w, const std::vector<float>& a) {
  Dot d{0, 0};
  for (size_t i = 0; i < w.size(); ++i) {
    d.exact += static_cast<double>(w[i]) * a[i];
    d.magnitude += std::fabs(static_cast<double>(w[i]) * a[i]);
  }
  return d;
}

// Q4_1/Q5_1 pair with Q8_1 whose s = f16(d * sum(q)) is rounded: their dots carry
// m * (s - d sum q), at most 2^-11 |m s| per block, on top of float rounding.
double min_term_slack(GgmlType t, const std::vector<uint8_t>& w, const std::vector<uint8_t>& a) {
  if (t != GgmlType::Q4_1 && t != GgmlType::Q5_1) return 0;
  const size_t wbytes = t == GgmlType::Q4_1 ? sizeof(BlockQ4_1) : sizeof(BlockQ5_1);
  double slack = 0;
  for (size_t b = 0; b < a.size() / sizeof(BlockQ8_1); ++b) {
    uint16_t m, s;
    std::memcpy(&m, w.data() + b * wbytes + 2, 2);  // m follows d in both formats
    std::memcpy(&s, a.data() + b * sizeof(BlockQ8_1) + 2, 2);
    slack += std::fabs(fp16_to_fp32(m) * fp16_to_fp32(s)) * 0x1p-10;
  }
  return slack;
}

struct Paths {
  float scalar, best;
};

Paths run_dots(const QuantOps& ops, const std::vector<uint8_t>& w, const std::vector<uint8_t>& a,
               int64_t n) {
  return {ops.vec_dot_scalar(w.data(), a.data(), n), ops.vec_dot(w.data(), a.data(), n)};
}

TEST(QuantVecDot, RandomRowsMatchFloat64OnScalarAndSimdPaths) {
  for (GgmlType t : kWeightTypes) {
    const QuantOps& ops = quant_ops(t);
    const QuantOps& act = quant_ops(ops.vec_dot_type);
    ASSERT_NE(ops.vec_dot, nullptr) << name(t);
    // 16 super-blocks; the plain formats also get lengths that leave SIMD tails.
    std::vector<int64_t> lengths = {4096, 256};
    if (ops.block_elements == 1) lengths.insert(lengths.end(), {4099, 37, 7});
    if (ops.block_elements == 32)
      lengths.insert(lengths.end(), {224, 32});  // not 4-block multiples
    for (int64_t n : lengths) {
      Rng rng{static_cast<uint64_t>(n) * 31 + static_cast<uint64_t>(t)};
      std::vector<float> wf(n), af(n);
      for (auto& v : wf) v = rng.normal();
      for (auto& v : af) v = rng.normal() * 3.0f;
      std::vector<uint8_t> wq(ops.row_bytes(n)), aq(act.row_bytes(n));
      ops.from_float(wf.data(), wq.data(), n);
      act.from_float(af.data(), aq.data(), n);
      const Dot ref = reference_dot(to_float(t, wq, n), to_float(ops.vec_dot_type, aq, n));
      const double tol = 2e-6 * ref.magnitude + min_term_slack(t, wq, aq);
      const Paths got = run_dots(ops, wq, aq, n);
      EXPECT_NEAR(got.scalar, ref.exact, tol) << name(t) << " scalar n=" << n;
      EXPECT_NEAR(got.best, ref.exact, tol)
          << name(t) << (ops.vec_dot_is_simd ? " simd" : "") << " n=" << n;
      // The quantized dot against the exact dot of the original floats, relative to
      // |w| |a|: how much the formats lose, end to end (loose: documents, not pins).
      double exact = 0, ww = 0, aa = 0;
      for (int64_t i = 0; i < n; ++i) {
        exact += static_cast<double>(wf[i]) * af[i];
        ww += static_cast<double>(wf[i]) * wf[i];
        aa += static_cast<double>(af[i]) * af[i];
      }
      if (n >= 256) {  // short rows are too noisy for a fixed bound
        EXPECT_LT(std::fabs(got.best - exact) / std::sqrt(ww * aa),
                  t == GgmlType::Q2_K ? 0.05 : 0.02)
            << name(t) << " n=" << n;
      }
    }
  }
}

// Weights and activations of arbitrary bit patterns, with power-of-two scales and
// activations in [-3, 3]: every product and partial sum is exact in float, so the
// scalar path, the SIMD path and float64 must agree to the last bit. This catches
// any unpacking mistake (a wrong nibble, bit or scale) in either path.
TEST(QuantVecDot, ArbitraryBlocksWithExactArithmeticAgreeBitForBit) {
  for (GgmlType t : kWeightTypes) {
    const QuantOps& ops = quant_ops(t);
    if (ops.block_elements == 1) continue;  // plain formats: covered above and by the half tests
    const QuantOps& act = quant_ops(ops.vec_dot_type);
    const int64_t n = ops.block_elements == 32 ? 480 : 512;  // 15 blocks: SIMD groups of 4 + a tail
    Rng rng{1000 + static_cast<uint64_t>(t)};
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<uint8_t> wq(ops.row_bytes(n)), aq(act.row_bytes(n));
      for (auto& b : wq) b = static_cast<uint8_t>(rng.next());
      // f16 fields of the weights: powers of two between 2^-6 and 2^-2.
      const size_t bb = ops.block_bytes;
      for (size_t b = 0; b < wq.size() / bb; ++b) {
        uint8_t* blk = wq.data() + b * bb;
        auto put = [&](size_t offset) {
          const uint16_t h = fp32_to_fp16(std::ldexp(1.0f, rng.range(-6, -2)));
          std::memcpy(blk + offset, &h, 2);
        };
        switch (t) {
          case GgmlType::Q4_0:
          case GgmlType::Q5_0:
          case GgmlType::Q8_0:
            put(0);
            break;
          case GgmlType::Q4_1:
          case GgmlType::Q5_1:
            put(0);
            put(2);
            break;
          case GgmlType::Q2_K:
            put(offsetof(BlockQ2_K, d));
            put(offsetof(BlockQ2_K, dmin));
            break;
          case GgmlType::Q3_K:
            put(offsetof(BlockQ3_K, d));
            break;
          case GgmlType::Q4_K:
            put(0);
            put(2);
            break;
          case GgmlType::Q5_K:
            put(0);
            put(2);
            break;
          case GgmlType::Q6_K:
            put(offsetof(BlockQ6_K, d));
            break;
          default:
            FAIL();
        }
        if (t == GgmlType::Q8_0) {  // ggml never writes -128 into Q8_0
          for (int j = 0; j < 32; ++j) {
            if (blk[2 + j] == 0x80) blk[2 + j] = 0x81;
          }
        }
      }
      // Activations: small levels, power-of-two d, consistent s / bsums.
      std::vector<float> unused;
      if (ops.vec_dot_type == GgmlType::Q8_K) {
        for (int64_t b = 0; b < n / 256; ++b) {
          BlockQ8_K blk{};
          blk.d = std::ldexp(1.0f, rng.range(-5, -1));
          for (int j = 0; j < 256; ++j) blk.qs[j] = static_cast<int8_t>(rng.range(-3, 3));
          for (int g = 0; g < 16; ++g) {
            int s = 0;
            for (int j = 0; j < 16; ++j) s += blk.qs[16 * g + j];
            blk.bsums[g] = static_cast<int16_t>(s);
          }
          std::memcpy(aq.data() + b * sizeof(blk), &blk, sizeof(blk));
        }
      } else {
        const bool q81 = ops.vec_dot_type == GgmlType::Q8_1;
        const size_t ab = act.block_bytes;
        for (int64_t b = 0; b < n / 32; ++b) {
          uint8_t* blk = aq.data() + b * ab;
          const float d = std::ldexp(1.0f, rng.range(-5, -1));
          const uint16_t dh = fp32_to_fp16(d);
          std::memcpy(blk, &dh, 2);
          int sum = 0;
          int8_t* qs = reinterpret_cast<int8_t*>(blk + (q81 ? 4 : 2));
          for (int j = 0; j < 32; ++j) sum += (qs[j] = static_cast<int8_t>(rng.range(-3, 3)));
          if (q81) {
            const uint16_t sh = fp32_to_fp16(d * static_cast<float>(sum));  // exact
            std::memcpy(blk + 2, &sh, 2);
          }
        }
      }
      const Dot ref = reference_dot(to_float(t, wq, n), to_float(ops.vec_dot_type, aq, n));
      const Paths got = run_dots(ops, wq, aq, n);
      ASSERT_EQ(static_cast<double>(got.scalar), ref.exact) << name(t) << " trial " << trial;
      ASSERT_EQ(static_cast<double>(got.best), ref.exact) << name(t) << " trial " << trial;
    }
  }
}

TEST(QuantVecDot, SimdKernelsAreSelectedWhenTheCpuHasAvx2) {
  if (!quant_avx2_enabled()) GTEST_SKIP() << "no AVX2/FMA/F16C (or NVHCQ_QUANT_SCALAR set)";
  for (GgmlType t : kWeightTypes) {
    const QuantOps& ops = quant_ops(t);
    EXPECT_TRUE(ops.vec_dot_is_simd) << name(t);
    EXPECT_NE(ops.vec_dot, ops.vec_dot_scalar) << name(t);
  }
}

TEST(QuantVecDot, ActivationTypesFollowGgml) {
  EXPECT_EQ(quant_ops(GgmlType::Q4_0).vec_dot_type, GgmlType::Q8_0);
  EXPECT_EQ(quant_ops(GgmlType::Q5_0).vec_dot_type, GgmlType::Q8_0);
  EXPECT_EQ(quant_ops(GgmlType::Q8_0).vec_dot_type, GgmlType::Q8_0);
  EXPECT_EQ(quant_ops(GgmlType::Q4_1).vec_dot_type, GgmlType::Q8_1);
  EXPECT_EQ(quant_ops(GgmlType::Q5_1).vec_dot_type, GgmlType::Q8_1);
  for (GgmlType t :
       {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    EXPECT_EQ(quant_ops(t).vec_dot_type, GgmlType::Q8_K) << name(t);
  }
  EXPECT_EQ(quant_ops(GgmlType::F16).vec_dot_type, GgmlType::F16);
  EXPECT_EQ(quant_ops(GgmlType::BF16).vec_dot_type, GgmlType::BF16);
  EXPECT_EQ(quant_ops(GgmlType::F32).vec_dot_type, GgmlType::F32);
  EXPECT_EQ(quant_ops(GgmlType::Q8_K).vec_dot, nullptr);  // activation-only formats
  EXPECT_EQ(quant_ops(GgmlType::Q8_1).vec_dot, nullptr);
  EXPECT_FALSE(quant_ops(GgmlType::Q4_K).row_fits(300));
  EXPECT_TRUE(quant_ops(GgmlType::Q4_K).row_fits(512));
  EXPECT_EQ(quant_ops(GgmlType::Q4_K).row_bytes(512), 288u);
}

}  // namespace
}  // namespace nvhcq::llm
