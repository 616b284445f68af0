#include "tensor/view.h"

#include <gtest/gtest.h>

namespace nvhcq::tensor {
namespace {

TEST(View, ReshapeMergesAndSplitsContiguousRuns) {
  View v = View::contiguous({2, 3, 4});
  auto r = v.reshape({6, 4});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->strides, (Strides{4, 1}));
  r = v.reshape({2, 12, 1});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->strides[0], 12);
  EXPECT_EQ(r->strides[1], 1);
  EXPECT_TRUE(r->is_contiguous());
}

TEST(View, ReshapeOfTransposeNeedsACopyUnlessAxesStayApart) {
  View t = View::contiguous({3, 4}).permute({1, 0});  // strides {1, 4}
  EXPECT_FALSE(t.reshape({12}));
  auto split = t.reshape({2, 2, 3});  // splits the stride-1 axis only
  ASSERT_TRUE(split);
  EXPECT_EQ(split->strides, (Strides{2, 1, 4}));
  auto ones = t.reshape({1, 4, 1, 3});
  ASSERT_TRUE(ones);
  EXPECT_EQ(ones->strides[1], 1);
  EXPECT_EQ(ones->strides[3], 4);
}

TEST(View, ExpandedAxesCannotMerge) {
  View e = View::contiguous({1, 5}).expand({4, 5});
  EXPECT_EQ(e.strides, (Strides{0, 1}));
  EXPECT_FALSE(e.reshape({20}));
  EXPECT_TRUE(e.reshape({4, 1, 5}));
}

TEST(View, NegativeStepSliceAndFlip) {
  View v = View::contiguous({10});
  View s = v.slice(0, 8, -3, 3);  // 8, 5, 2
  EXPECT_EQ(s.offset, 8);
  EXPECT_EQ(s.strides[0], -3);
  View f = v.flip(0);
  EXPECT_EQ(f.offset, 9);
  EXPECT_EQ(f.strides[0], -1);
  EXPECT_FALSE(f.is_contiguous());
}

TEST(View, PaddingMasksFollowSlicesAndFlips) {
  View p = *View::contiguous({4}).pad(0, 2, 3, Scalar(0));  // shape 9, valid [2, 6)
  ASSERT_TRUE(p.masked());
  EXPECT_EQ(p.shape[0], 9);
  EXPECT_EQ(p.valid[0], (std::pair<int64_t, int64_t>{2, 6}));
  EXPECT_EQ(p.offset, -2);
  // Every other element from 7 down: indices 7, 5, 3, 1 -> valid are 5 and 3 (positions 1, 2).
  View s = p.slice(0, 7, -2, 4);
  EXPECT_EQ(s.valid[0], (std::pair<int64_t, int64_t>{1, 3}));
  View f = p.flip(0);  // valid [9-6, 9-2) = [3, 7)
  EXPECT_EQ(f.valid[0], (std::pair<int64_t, int64_t>{3, 7}));
  // Slicing away the padding drops the mask.
  View inner = p.slice(0, 2, 1, 4);
  EXPECT_FALSE(inner.masked());
  EXPECT_EQ(inner.offset, 0);
}

TEST(View, PaddingWithAnotherValueNeedsACopy) {
  View p = *View::contiguous({4}).pad(0, 1, 1, Scalar(0));
  EXPECT_TRUE(p.pad(0, 1, 0, Scalar(0)));
  EXPECT_FALSE(p.pad(0, 1, 0, Scalar(1.5)));
  // Reshape of a masked view only by inserting axes of extent 1.
  EXPECT_TRUE(p.reshape({1, 6}));
  View p2 = *View::contiguous({2, 3}).pad(1, 1, 0, Scalar(0));
  EXPECT_FALSE(p2.reshape({8}));
}

TEST(View, IdentityDetection) {
  EXPECT_TRUE(View::contiguous({3, 4}).is_identity({3, 4}));
  EXPECT_FALSE(View::contiguous({3, 4}).slice(0, 1, 1, 2).is_identity({3, 4}));
  EXPECT_FALSE(View::contiguous({3, 4}).permute({1, 0}).is_identity({4, 3}));
}

}  // namespace
}  // namespace nvhcq::tensor
