#include "tensor/dtype.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace nvhcq::tensor {
namespace {

const DType kAll[] = {DType::kBool, DType::kU8,  DType::kI8,   DType::kI16, DType::kI32,
                      DType::kI64,  DType::kF16, DType::kBF16, DType::kF32, DType::kF64};

TEST(DTypePromotion, IsSymmetricIdempotentAndNeverNarrows) {
  for (DType a : kAll) {
    EXPECT_EQ(promote_types(a, a), a);
    for (DType b : kAll) {
      DType p = promote_types(a, b);
      EXPECT_EQ(p, promote_types(b, a)) << dtype_name(a) << " " << dtype_name(b);
      EXPECT_EQ(promote_types(p, a), p);  // p holds a
      EXPECT_EQ(promote_types(p, b), p);
    }
  }
}

TEST(DTypePromotion, DocumentedTable) {
  EXPECT_EQ(promote_types(DType::kBool, DType::kU8), DType::kU8);
  EXPECT_EQ(promote_types(DType::kU8, DType::kI8), DType::kI16);
  EXPECT_EQ(promote_types(DType::kU8, DType::kI16), DType::kI16);
  EXPECT_EQ(promote_types(DType::kI8, DType::kI64), DType::kI64);
  EXPECT_EQ(promote_types(DType::kI64, DType::kF16), DType::kF16);
  EXPECT_EQ(promote_types(DType::kF16, DType::kBF16), DType::kF32);
  EXPECT_EQ(promote_types(DType::kBF16, DType::kF32), DType::kF32);
  EXPECT_EQ(promote_types(DType::kF32, DType::kF64), DType::kF64);
}

TEST(DTypePromotion, WeakScalars) {
  EXPECT_EQ(scalar_dtype(DType::kF16, Scalar(2.5)), DType::kF16);
  EXPECT_EQ(scalar_dtype(DType::kI8, Scalar(300)), DType::kI8);
  EXPECT_EQ(scalar_dtype(DType::kI32, Scalar(2.5)), DType::kF32);
  EXPECT_EQ(scalar_dtype(DType::kBool, Scalar(2)), DType::kI64);
  EXPECT_EQ(scalar_dtype(DType::kBool, Scalar(true)), DType::kBool);
  EXPECT_EQ(default_dtype(Scalar(1)), DType::kI64);
  EXPECT_EQ(default_dtype(Scalar(1.0f)), DType::kF32);
}

TEST(DTypeNames, ParseRoundTripsAndRejectsUnknown) {
  for (DType t : kAll) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  try {
    parse_dtype("float8");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);  // lists the valid names
  }
}

TEST(Scalar, KeepsKindAndConvertsExactly) {
  Scalar big(int64_t{1} << 60);
  EXPECT_EQ(big.to_int(), int64_t{1} << 60);
  EXPECT_FALSE(big.is_float());
  EXPECT_EQ(Scalar(-2.9).to_int(), -2);
  EXPECT_EQ(Scalar(1e300).to_int(), INT64_MAX);
  EXPECT_TRUE(Scalar(true).is_bool());
  EXPECT_EQ(Scalar(0.5).to_string(), "0.5");
}

}  // namespace
}  // namespace nvhcq::tensor
