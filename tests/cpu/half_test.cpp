#include "cpu/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace nvhcq::cpu {
namespace {

TEST(Half, KnownEncodings) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                 // largest finite
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);                 // below the halfway point
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                 // halfway rounds to even: inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);    // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);    // tie -> even (0)
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);    // tie -> even (2)
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);    // smallest normal
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
}

TEST(Half, EveryEncodingRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

TEST(Half, SubnormalValues) {
  EXPECT_FLOAT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_FLOAT_EQ(half_to_float(0x03FF), 1023 * std::ldexp(1.0f, -24));
  EXPECT_FLOAT_EQ(half_to_float(0x8001), -std::ldexp(1.0f, -24));
}

TEST(BFloat16, KnownEncodingsAndRounding) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-1.0f), 0xBF80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_float(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      ASSERT_EQ(float_to_bf16(f), b) << std::hex << b;
    }
  }
}

// A double just above a half-precision tie must round up. Rounding to f32 first
// (to nearest) would land exactly on the tie and round to even (down).
TEST(Half, DoubleConversionRoundsOnce) {
  const double tie = 1.0 + std::ldexp(1.0, -11);
  EXPECT_EQ(double_to_half(tie), 0x3C00);
  EXPECT_EQ(double_to_half(tie + std::ldexp(1.0, -40)), 0x3C01);
  EXPECT_EQ(double_to_half(tie - std::ldexp(1.0, -40)), 0x3C00);
  const double btie = 1.0 + std::ldexp(1.0, -8);
  EXPECT_EQ(double_to_bf16(btie + std::ldexp(1.0, -40)), 0x3F81);
  EXPECT_EQ(double_to_bf16(btie), 0x3F80);
  EXPECT_EQ(double_to_half(1e300), 0x7C00);
  EXPECT_EQ(double_to_half(-1e-300), 0x8000);
  EXPECT_EQ(double_to_half(0.1), float_to_half(0.1f));
}

}  // namespace
}  // namespace nvhcq::cpu
