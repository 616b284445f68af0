#include "cpu/philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu/half.h"

namespace nvhcq::cpu {
namespace {

// Known-answer vectors of Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST(Philox, KnownAnswerVectors) {
  using A4 = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (A4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (A4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (A4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, UniformDrawsFollowTheDocumentedMapping) {
  std::vector<float> out(8);
  philox_uniform(42, 100, 8, DType::kF32, out.data());
  for (int i = 0; i < 8; ++i) {
    auto w = philox4x32_10({static_cast<uint32_t>(100 + i), 0, 0, 0}, {42, 0});
    EXPECT_EQ(out[i], static_cast<float>(w[0] >> 8) * 0x1.0p-24f) << i;
  }
}

TEST(Philox, OffsetsContinueTheSameStream) {
  std::vector<double> all(64), tail(32);
  philox_uniform(7, 0, 64, DType::kF64, all.data());
  philox_uniform(7, 32, 32, DType::kF64, tail.data());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(all[32 + i], tail[i]);
}

TEST(Philox, NarrowUniformsStayBelowOne) {
  std::vector<uint16_t> h(1 << 16), b(1 << 16);
  philox_uniform(3, 0, 1 << 16, DType::kF16, h.data());
  philox_uniform(3, 0, 1 << 16, DType::kBF16, b.data());
  for (size_t i = 0; i < h.size(); ++i) {
    ASSERT_LT(half_to_float(h[i]), 1.0f);
    ASSERT_GE(half_to_float(h[i]), 0.0f);
    ASSERT_LT(bf16_to_float(b[i]), 1.0f);
  }
}

TEST(Philox, NormalMoments) {
  std::vector<double> z(1 << 16);
  philox_normal(11, 0, static_cast<int64_t>(z.size()), DType::kF64, z.data());
  double m = 0, s = 0, k = 0;
  for (double v : z) m += v / z.size();
  for (double v : z) {
    s += (v - m) * (v - m) / z.size();
    k += std::pow(v - m, 4) / z.size();
  }
  EXPECT_NEAR(m, 0.0, 0.02);
  EXPECT_NEAR(s, 1.0, 0.02);
  EXPECT_NEAR(k / (s * s), 3.0, 0.1);  // kurtosis of a normal
}

TEST(Philox, RandintCoversRangeAndRejectsEmpty) {
  std::vector<int64_t> r(4096);
  philox_randint(5, 0, 4096, -2, 3, DType::kI64, r.data());
  std::vector<int> counts(5, 0);
  for (int64_t v : r) {
    ASSERT_GE(v, -2);
    ASSERT_LT(v, 3);
    counts[v + 2]++;
  }
  for (int c : counts) EXPECT_NEAR(c, 4096 / 5, 120);
  EXPECT_ANY_THROW(philox_randint(5, 0, 4, 3, 3, DType::kI64, r.data()));
  EXPECT_ANY_THROW(philox_uniform(5, 0, 4, DType::kI32, r.data()));
}

}  // namespace
}  // namespace nvhcq::cpu
