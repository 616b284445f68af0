// Direct tests of the elementwise kernels: operand addressing (negative and zero
// strides, padding masks), integer edge semantics and cast rules.
#include "cpu/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/error.h"
#include "cpu/element.h"

namespace nvhcq::cpu {
namespace {

template <typename T>
StridedOperand operand(std::vector<T>& v, DType t, const int64_t* strides, int64_t offset = 0) {
  StridedOperand op;
  op.data = v.data();
  op.dtype = t;
  op.strides = strides;
  op.offset = offset;
  return op;
}

TEST(Elementwise, NegativeAndZeroStrides) {
  // a: 3x4 read flipped along both axes; b: a row broadcast over 3 rows.
  std::vector<float> a(12), b = {1, 2, 3, 4}, out(12, -1);
  for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i);
  const int64_t shape[2] = {3, 4}, sa[2] = {-4, -1}, sb[2] = {0, 1}, so[2] = {4, 1};
  binary(BinaryOp::kSub, 2, shape, operand(out, DType::kF32, so), operand(a, DType::kF32, sa, 11),
         operand(b, DType::kF32, sb));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(out[r * 4 + c], a[11 - r * 4 - c] - b[c]) << r << "," << c;
}

TEST(Elementwise, MaskedOperandReadsPadValue) {
  // A 5x6 view whose valid window is rows [1,4) and columns [2,5) of a 3x3 base.
  std::vector<int32_t> base = {1, 2, 3, 4, 5, 6, 7, 8, 9}, out(30, 0);
  const int64_t shape[2] = {5, 6}, st[2] = {3, 1}, so[2] = {6, 1};
  const int64_t lo[2] = {1, 2}, hi[2] = {4, 5};
  StridedOperand in = operand(base, DType::kI32, st, -1 * 3 - 2);
  in.valid_lo = lo;
  in.valid_hi = hi;
  in.pad_int = -7;
  unary(UnaryOp::kNeg, 2, shape, operand(out, DType::kI32, so), in);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 6; ++c) {
      const bool valid = r >= 1 && r < 4 && c >= 2 && c < 5;
      EXPECT_EQ(out[r * 6 + c], valid ? -base[(r - 1) * 3 + (c - 2)] : 7) << r << "," << c;
    }
  }
}

// Padded rows of a broadcast (stride-0) axis start before the buffer: nothing may
// be read there (AddressSanitizer builds check this).
TEST(Elementwise, FullyPaddedRowsAreNeverRead) {
  std::vector<float> base = {1, 2, 3}, out(5 * 4, 0);
  const int64_t shape[2] = {5, 4}, st[2] = {1, 0}, so[2] = {4, 1}, lo[2] = {1, 0}, hi[2] = {4, 4};
  StridedOperand in = operand(base, DType::kF32, st, -1);
  in.valid_lo = lo;
  in.valid_hi = hi;
  in.pad_float = 9;
  cast_copy(2, shape, operand(out, DType::kF32, so), in);
  unary(UnaryOp::kAbs, 2, shape, operand(out, DType::kF32, so), in);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(out[r * 4 + c], (r >= 1 && r < 4) ? base[r - 1] : 9.0f);
}

TEST(Elementwise, LongRowsSpanSeveralTiles) {
  const int64_t n = 3 * 1024 + 17;
  std::vector<double> a(n), out(n);
  for (int64_t i = 0; i < n; ++i) a[i] = static_cast<double>(i) * 0.5;
  const int64_t shape[1] = {n}, st[1] = {1};
  unary(UnaryOp::kSqrt, 1, shape, operand(out, DType::kF64, st), operand(a, DType::kF64, st));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], std::sqrt(a[i])) << i;
}

TEST(Elementwise, IntegerEdgeCasesNeverTrap) {
  std::vector<int64_t> a = {std::numeric_limits<int64_t>::min(), 7, -7, 7, -8, 1, 5, -3};
  std::vector<int64_t> b = {-1, 0, 2, -2, 70, 64, -1, 3};
  std::vector<int64_t> out(8);
  const int64_t shape[1] = {8}, st[1] = {1};
  auto run = [&](BinaryOp op) {
    binary(op, 1, shape, operand(out, DType::kI64, st), operand(a, DType::kI64, st), operand(b, DType::kI64, st));
    return out;
  };
  auto mod = run(BinaryOp::kMod);
  EXPECT_EQ(mod[0], 0);   // INT64_MIN mod -1
  EXPECT_EQ(mod[1], 0);   // x mod 0
  EXPECT_EQ(mod[2], 1);   // -7 mod 2 (sign of divisor)
  EXPECT_EQ(mod[3], -1);  // 7 mod -2
  auto shl = run(BinaryOp::kShl);
  EXPECT_EQ(shl[4], 0);   // shift >= 64
  EXPECT_EQ(shl[6], 0);   // negative shift
  auto shr = run(BinaryOp::kShr);
  EXPECT_EQ(shr[4], -1);  // -8 >> 70: sign fill
  EXPECT_EQ(shr[7], -1);  // -3 >> 3 is arithmetic
  auto pw = run(BinaryOp::kPow);
  EXPECT_EQ(pw[2], 49);
  EXPECT_EQ(pw[3], 0);     // 7^-2 truncates to 0
  EXPECT_EQ(pw[6], 0);
  auto sub = run(BinaryOp::kSub);
  EXPECT_EQ(sub[0], std::numeric_limits<int64_t>::min() + 1);
}

TEST(Elementwise, NarrowIntegersWrap) {
  std::vector<int8_t> a = {100, -100, 127}, b = {100, -100, 1}, out(3);
  const int64_t shape[1] = {3}, st[1] = {1};
  binary(BinaryOp::kAdd, 1, shape, operand(out, DType::kI8, st), operand(a, DType::kI8, st), operand(b, DType::kI8, st));
  EXPECT_EQ(out[0], -56);
  EXPECT_EQ(out[1], 56);
  EXPECT_EQ(out[2], -128);
}

TEST(Elementwise, CastRules) {
  std::vector<float> f = {NAN, 1e10f, -1e10f, -2.7f, 2.7f, -0.5f, 300.0f};
  std::vector<int8_t> i8(7);
  std::vector<uint8_t> u8(7), b(7);
  const int64_t shape[1] = {7}, st[1] = {1};
  cast_copy(1, shape, operand(i8, DType::kI8, st), operand(f, DType::kF32, st));
  EXPECT_EQ(i8, (std::vector<int8_t>{0, 127, -128, -2, 2, 0, 127}));
  cast_copy(1, shape, operand(u8, DType::kU8, st), operand(f, DType::kF32, st));
  EXPECT_EQ(u8, (std::vector<uint8_t>{0, 255, 0, 0, 2, 0, 255}));
  cast_copy(1, shape, operand(b, DType::kBool, st), operand(f, DType::kF32, st));
  EXPECT_EQ(b, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1}));
  std::vector<int64_t> big = {300, -129, 255, 0, 1, 2, 3};
  cast_copy(1, shape, operand(i8, DType::kI8, st), operand(big, DType::kI64, st));
  EXPECT_EQ(i8[0], 44);
  EXPECT_EQ(i8[1], 127);
  EXPECT_EQ(i8[2], -1);
}

TEST(Elementwise, WhereUsesTruthOfAnyDtype) {
  std::vector<float> cond = {0.0f, -0.0f, 0.5f, NAN}, a = {1, 1, 1, 1}, b = {2, 2, 2, 2}, out(4);
  const int64_t shape[1] = {4}, st[1] = {1};
  where(1, shape, operand(out, DType::kF32, st), operand(cond, DType::kF32, st), operand(a, DType::kF32, st),
        operand(b, DType::kF32, st));
  EXPECT_EQ(out, (std::vector<float>{2, 2, 1, 1}));
}

TEST(Elementwise, RejectsUnsupportedDtypes) {
  std::vector<int32_t> a = {1}, out(1);
  std::vector<float> f = {1}, fo(1);
  const int64_t shape[1] = {1}, st[1] = {1};
  EXPECT_THROW(unary(UnaryOp::kExp, 1, shape, operand(out, DType::kI32, st), operand(a, DType::kI32, st)), Error);
  EXPECT_THROW(binary(BinaryOp::kBitAnd, 1, shape, operand(fo, DType::kF32, st), operand(f, DType::kF32, st),
                      operand(f, DType::kF32, st)),
               Error);
  EXPECT_THROW(binary(BinaryOp::kAdd, 1, shape, operand(fo, DType::kF32, st), operand(f, DType::kF32, st),
                      operand(a, DType::kI32, st)),
               Error);
}

}  // namespace
}  // namespace nvhcq::cpu
