// Tensor handle behaviour: properties, reading data, copies and printing.
#include <gtest/gtest.h>

#include "base/error.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

TEST(TensorApi, PropertiesOfViewsAndComputedTensors) {
  Tensor a = Tensor::zeros({2, 3, 4}, DType::kBF16);
  EXPECT_EQ(a.ndim(), 3);
  EXPECT_EQ(a.numel(), 24);
  EXPECT_EQ(a.size(-1), 4);
  EXPECT_EQ(a.dtype(), DType::kBF16);
  EXPECT_EQ(a.device(), "cpu");
  Tensor p = a.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_THROW(a.size(3), Error);
  EXPECT_FALSE(Tensor().defined());
  EXPECT_THROW(Tensor().shape(), Error);
}

TEST(TensorApi, BoolVectorsRoundTrip) {
  Tensor b = Tensor::from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(b.cast(DType::kI32).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 1}));
  Tensor f = Tensor::from_vector<bool>({true, false}, {2}, DType::kF32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 0}));
}

TEST(TensorApi, CloneIsIndependentContiguousIsFreeForDenseTensors) {
  Tensor a = Tensor::arange(4, DType::kF32).realize();
  EXPECT_EQ(a.contiguous().node(), a.node());
  Tensor c = a.clone();
  EXPECT_NE(c.node(), a.node());
  c.realize();
  EXPECT_NE(c.node()->buffer, a.node()->buffer);
  EXPECT_EQ(c.to_vector<float>(), a.to_vector<float>());
}

TEST(TensorApi, ItemAndToString) {
  EXPECT_EQ(Tensor::scalar(3).item<int64_t>(), 3);
  EXPECT_EQ(Tensor::scalar(2.5).dtype(), DType::kF32);
  EXPECT_EQ(Tensor::full({1, 1}, 7, DType::kI8).item<int>(), 7);
  std::string s = Tensor::arange(3, DType::kI16).to_string();
  EXPECT_NE(s.find("shape=[3]"), std::string::npos);
  EXPECT_NE(s.find("i16"), std::string::npos);
  EXPECT_NE(s.find("0, 1, 2"), std::string::npos);
}

TEST(TensorApi, ReadingConvertsWithCastRules) {
  Tensor x = Tensor::from_vector<float>({-1.5f, 2.7f, 300.0f}, {3});
  EXPECT_EQ(x.to_vector<int8_t>(), (std::vector<int8_t>{-1, 2, 127}));
  EXPECT_EQ(x.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 2, 255}));
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{-1.5, 2.700000047683716, 300.0}));
}

TEST(TensorApi, OperatorsWithScalarsOnEitherSide) {
  Tensor x = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  EXPECT_EQ((10 - x).to_vector<int32_t>(), (std::vector<int32_t>{9, 8, 7}));
  EXPECT_EQ((x * 2).dtype(), DType::kI32);
  EXPECT_EQ((x / 2).to_vector<float>(), (std::vector<float>{0.5f, 1.0f, 1.5f}));
  EXPECT_EQ((-x).to_vector<int32_t>(), (std::vector<int32_t>{-1, -2, -3}));
}

}  // namespace
}  // namespace nvhcq::tensor
