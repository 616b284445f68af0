// The lazy graph: nothing runs before realize, views share buffers, realized
// nodes release their sources, schedules are ordered and deduplicated.
#include <gtest/gtest.h>

#include "tensor/backend.h"
#include "tensor/realize.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

TEST(Graph, OpsAreLazyUntilRealized) {
  Tensor a = Tensor::arange(6, DType::kF32).reshape({2, 3});
  Tensor b = (a * 2.0 + 1.0).sum({1});
  EXPECT_FALSE(b.is_realized());
  // keepdim=false is a view (dropping the reduced axis) of the reduce node.
  EXPECT_EQ(b.node()->op, Op::kView);
  const NodePtr reduce = base_of(b.node());
  EXPECT_EQ(reduce->op, Op::kReduce);
  EXPECT_EQ(reduce->shape, (Shape{2, 1}));
  EXPECT_EQ(b.shape(), (Shape{2}));
  b.realize();
  EXPECT_TRUE(b.is_realized());
  EXPECT_EQ(reduce->op, Op::kBuffer);
  EXPECT_TRUE(reduce->src.empty());  // sources released
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{9, 27}));
}

TEST(Graph, MovementOpsAreViewsOfOneBuffer) {
  Tensor a = Tensor::arange(12, DType::kI32).reshape({3, 4}).realize();
  Tensor v = a.t().slice(0, 1, 3).flip({1});
  EXPECT_EQ(v.node()->op, Op::kView);
  EXPECT_EQ(v.node()->src[0], base_of(a.node()));  // composed onto the base, not a chain
  EXPECT_EQ(v.strides(), (Strides{1, -4}));
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(v.to_vector<int32_t>(), (std::vector<int32_t>{9, 5, 1, 10, 6, 2}));
  Tensor c = v.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (Strides{3, 1}));
}

TEST(Graph, ScheduleListsSharedNodesOnceSourcesFirst) {
  Tensor x = Tensor::rand({4, 4}, 1);
  Tensor shared = x.exp();
  Tensor y = shared + shared * shared;
  Schedule s = build_schedule({y.node()});
  int count = 0;
  std::vector<const Node*> seen;
  for (const auto& n : s.nodes) {
    if (n == shared.node()) ++count;
    for (const auto& src : n->src) {
      if (!src->realized()) {
        EXPECT_NE(std::find(seen.begin(), seen.end(), src.get()), seen.end()) << "source after user";
      }
    }
    seen.push_back(n.get());
  }
  EXPECT_EQ(count, 1);
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.outputs[0], y.node());
}

TEST(Graph, RealizedIntermediatesAreReused) {
  Tensor x = Tensor::arange(5, DType::kF32);
  Tensor e = x.exp();
  Tensor first = e.sum();
  first.realize();
  EXPECT_TRUE(e.is_realized());  // the CPU backend realizes every computed node
  Schedule again = build_schedule({(e + 1.0).node()});
  for (const auto& n : again.nodes) EXPECT_NE(n, e.node());
}

TEST(Graph, LongChainsDoNotOverflowTheStack) {
  Tensor x = Tensor::zeros({3}, DType::kI64);
  for (int i = 0; i < 20000; ++i) x = x + 1;
  EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{20000, 20000, 20000}));
}

TEST(Graph, RealizeAllRunsSeveralOutputs) {
  Tensor a = Tensor::arange(4, DType::kF32);
  Tensor b = a * 3.0, c = a.sum();
  Tensor::realize_all({b, c});
  EXPECT_TRUE(b.is_realized());
  EXPECT_TRUE(c.is_realized());
  EXPECT_EQ(c.item<float>(), 6.0f);
}

TEST(Graph, ConstantsAreBroadcastViewsOfAScalar) {
  Tensor z = Tensor::full({1000, 1000}, 2.5);
  EXPECT_EQ(z.node()->op, Op::kView);
  EXPECT_EQ(z.node()->src[0]->op, Op::kConst);
  EXPECT_EQ(z.strides(), (Strides{0, 0}));
  EXPECT_EQ(z.sum().item<float>(), 2.5e6f);
}

}  // namespace
}  // namespace nvhcq::tensor
