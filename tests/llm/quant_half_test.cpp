// f16 / bf16 conversions: exact values at the edges (rounding ties, subnormals,
// overflow, NaN), an independent long-double reference over a sweep of float bit
// patterns, and the SIMD row paths against the scalar reference.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "llm/quant/half.h"
#include "llm/quant/rounding.h"
#include "llm/quant/simd.h"

namespace nvhcq::llm {
namespace {

float from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}

// Nearest binary16 by arithmetic on long doubles (ties to even), for finite,
// non-NaN inputs: an independent statement of the IEEE rule.
uint16_t reference_fp16(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  long double a = std::fabs(static_cast<long double>(f));
  if (std::isinf(f) || a >= 65520.0L) return sign | 0x7c00;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);               // a = m * 2^e, m in [0.5, 1)
  int exp = std::max(e - 1, -14);  // unbiased exponent of the result (subnormals: -14)
  const long double ulp = std::ldexp(1.0L, exp - 10);
  long double q = a / ulp;  // exact: a power-of-two scaling
  long double r = std::floor(q);
  const long double frac = q - r;
  if (frac > 0.5L || (frac == 0.5L && std::fmod(r, 2.0L) != 0)) r += 1;
  uint32_t mant = static_cast<uint32_t>(r);                                  // in [0, 2048]
  if (exp == -14 && mant < 1024) return sign | static_cast<uint16_t>(mant);  // subnormal or zero
  if (mant == 2048) {
    mant = 1024;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((exp + 15) << 10) | (mant - 1024));
}

TEST(QuantHalf, Fp16KnownValues) {
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);    // largest half
  EXPECT_EQ(fp32_to_fp16(65519.996f), 0x7bff);  // just below the rounding midpoint
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);    // the midpoint rounds to even: infinity
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(0x1p-14f), 0x0400);               // smallest normal
  EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001);               // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);               // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(fp32_to_fp16(from_bits(0x33000001)), 0x0001);  // just above that tie
  EXPECT_EQ(fp32_to_fp16(3 * 0x1p-25f), 0x0002);           // tie between 1 and 2 ulps: even is 2
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);        // tie: stays at even 1.0
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);    // tie: up to even
  EXPECT_EQ(fp32_to_fp16(0x1p-14f - 0x1p-25f), 0x0400);    // rounds up into the normals
  EXPECT_EQ(fp32_to_fp16(NAN), 0x7e00);
  EXPECT_EQ(fp32_to_fp16(from_bits(0xff800123)), 0xfe00);  // any NaN -> quiet, sign kept
}

TEST(QuantHalf, Fp16ToFp32KnownValuesAndRoundTrip) {
  EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_fp32(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(std::bit_cast<uint32_t>(fp16_to_fp32(0x8000)), 0x80000000u);
  EXPECT_EQ(fp16_to_fp32(0xfc00), -INFINITY);
  EXPECT_EQ(std::bit_cast<uint32_t>(fp16_to_fp32(0x7c01)), 0x7fc02000u);  // signalling -> quiet
  // Every half survives the trip through f32 (NaNs come back as the quiet NaN).
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    ASSERT_EQ(fp32_to_fp16(f), nan ? ((h & 0x8000) | 0x7e00) : h) << std::hex << h;
  }
}

TEST(QuantHalf, Fp16MatchesLongDoubleReferenceOnSweep) {
  // Every 251st bit pattern below infinity (17 million floats) plus both neighbours of
  // every half-way point between representable halves.
  int checked = 0;
  for (uint64_t b = 0; b < 0x7f800000u; b += 251) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float f = from_bits(static_cast<uint32_t>(b) | sign);
      ASSERT_EQ(fp32_to_fp16(f), reference_fp16(f)) << std::hex << b;
      ++checked;
    }
  }
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const float mid =
        (fp16_to_fp32(static_cast<uint16_t>(h)) + fp16_to_fp32(static_cast<uint16_t>(h + 1))) /
        2;  // exact in f32
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      ASSERT_EQ(fp32_to_fp16(f), reference_fp16(f)) << std::hex << std::bit_cast<uint32_t>(f);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000000);
}

TEST(QuantHalf, Bf16KnownValues) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // tie: down to even
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // tie: up to even
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001)), 0x3f81);  // above the tie
  EXPECT_EQ(fp32_to_bf16(from_bits(0x7f7fffff)), 0x7f80);  // max float rounds to infinity
  EXPECT_EQ(fp32_to_bf16(-INFINITY), 0xff80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x00000001)), 0x0000);  // subnormals are kept, not flushed:
  EXPECT_EQ(fp32_to_bf16(from_bits(0x00018000)), 0x0002);  // a subnormal tie rounds to even
  EXPECT_EQ(fp32_to_bf16(from_bits(0x7f800001)), 0x7fc0);  // signalling NaN -> quiet
  EXPECT_EQ(fp32_to_bf16(from_bits(0xffc12345)), 0xffc1);  // NaN keeps its top bits
  EXPECT_EQ(bf16_to_fp32(0xc040), -3.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(bf16_to_fp32(0x0001)), 0x00010000u);
}

// Inputs that exercise every branch: specials, ties, subnormals, random patterns.
std::vector<float> awkward_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65520.0f,
                          -65520.0f,
                          1e30f,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          -NAN,
                          from_bits(0x7f800001),
                          from_bits(0xffbfffff),
                          0x1p-25f,
                          3 * 0x1p-25f,
                          0x1p-14f,
                          from_bits(0x00000001),
                          from_bits(0x3f808000),
                          from_bits(0x3f818000)};
  uint64_t s = 0x9e3779b97f4a7c15ull;
  while (v.size() < 4099) {  // not a multiple of 8: the scalar tail runs too
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v.push_back(from_bits(static_cast<uint32_t>(s >> 16)));
  }
  return v;
}

TEST(QuantHalf, RowConversionsMatchScalarOnEveryPath) {
  if (!quant_avx2_enabled()) GTEST_SKIP() << "no AVX2/F16C: the rows take the scalar path";
  const std::vector<float> f = awkward_floats();
  std::vector<uint16_t> simd(f.size(), 0xdead), scalar(f.size(), 0xbeef);
  fp32_to_fp16_row(f.data(), simd.data(), f.size());
  fp32_to_fp16_row_scalar(f.data(), scalar.data(), f.size());
  EXPECT_EQ(simd, scalar);
  fp32_to_bf16_row(f.data(), simd.data(), f.size());
  fp32_to_bf16_row_scalar(f.data(), scalar.data(), f.size());
  EXPECT_EQ(simd, scalar);

  std::vector<uint16_t> halves(65536 + 5);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i * 40503u);
  for (size_t i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> a(halves.size(), -7.0f), b(halves.size(), 7.0f);
  fp16_to_fp32_row(halves.data(), a.data(), halves.size());
  fp16_to_fp32_row_scalar(halves.data(), b.data(), halves.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << i;
  }
  bf16_to_fp32_row(halves.data(), a.data(), halves.size());
  bf16_to_fp32_row_scalar(halves.data(), b.data(), halves.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << i;
  }
}

// The Q8_0/Q8_1 quantizers round with a libm-free roundf; it must equal
// (int8_t)roundf(x) everywhere (exhaustively checked once; a sweep here).
TEST(QuantHalf, Q8RoundingEqualsRoundf) {
  auto reference = [](float x) { return detail::trunc_to_int8(std::round(x)); };
  for (uint64_t b = 0; b < (1ull << 32); b += 257) {
    const float f = from_bits(static_cast<uint32_t>(b));
    ASSERT_EQ(detail::round_to_int8(f), reference(f)) << std::hex << b;
  }
  for (int i = -300; i <= 300; ++i) {  // the ties and their neighbours
    const float tie = i + 0.5f;
    for (float f : {tie, std::nextafter(tie, -1e9f), std::nextafter(tie, 1e9f)}) {
      ASSERT_EQ(detail::round_to_int8(f), reference(f)) << f;
    }
  }
  EXPECT_EQ(detail::round_to_int8(2.5f), 3);
  EXPECT_EQ(detail::round_to_int8(-2.5f), -3);
  EXPECT_EQ(detail::round_to_int8(0.49999997f), 0);
  EXPECT_EQ(detail::nearest_int(2.5f), 2);  // the K formats' rounding: ties to even
  EXPECT_EQ(detail::nearest_int(-3.5f), -4);
}

}  // namespace
}  // namespace nvhcq::llm
