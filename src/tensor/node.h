#pragma once
// The lazy op graph. A Tensor holds a Node; operations create new Nodes that
// point at their sources; nothing runs until a Tensor is realized. Node kinds:
//   sources    kBuffer (realized storage), kConst (a 0-d constant)
//   movement   kView (src[0] seen through a View; src[0] is never itself a View),
//              kCat (srcs joined along `axis`)
//   copy       kContiguous (dense copy of src[0]), kCast (to `dtype`)
//   elementwise kUnary, kBinary (operands share a dtype), kWhere (cond, a, b)
//   reduce     kReduce over `axes`; the output keeps them with extent 1
//   library    kMatmul, kConv2d, kConvTranspose2d, kPool2d, kGather,
//              kScatterAdd, kCumsum, kAttention
// Every source of an elementwise, reduce or library node already has the node's
// (broadcast) shape where that applies: broadcasting is explicit in Views, so a
// backend never infers it. When a node is realized it turns into kBuffer in
// place: its sources are released and `buffer` holds its dense row-major result.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/reduce.h"
#include "tensor/dtype.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/view.h"

namespace nvhcq::tensor {

class Buffer;

enum class Op : uint8_t {
  kBuffer, kConst, kView, kCat, kContiguous, kCast, kUnary, kBinary, kWhere, kReduce,
  kMatmul, kConv2d, kConvTranspose2d, kPool2d, kGather, kScatterAdd, kCumsum, kAttention,
};
const char* op_name(Op op);

using cpu::BinaryOp;
using cpu::ReduceOp;
using cpu::UnaryOp;

// kConv2d: src {x [N,C,H,W], w [O,C/groups,kh,kw], bias [O]?}.
// kConvTranspose2d: src {x [N,C,H,W], w [C,O/groups,kh,kw], bias [O]?}.
struct ConvArgs {
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1}, output_padding[2] = {0, 0};
  int64_t groups = 1;
  bool has_bias = false;
};

// kPool2d: src {x [N,C,H,W]}.
struct PoolArgs {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  bool max = true;
  bool count_include_pad = true;  // avg only
};

// kAttention: src {q [B...,L,E], k [B...,S,E], v [B...,S,Ev], mask [B...,L,S]?}; the
// batch axes B... are equal across sources; the mask is additive, of q's dtype.
struct AttentionArgs {
  double scale = 1.0;
  bool causal = false;
  bool has_mask = false;
};

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Node {
  Op op = Op::kBuffer;
  DType dtype = DType::kF32;
  Shape shape;
  std::string device;
  std::vector<NodePtr> src;

  // Arguments; which ones matter depends on `op`.
  UnaryOp unary_op = UnaryOp::kNeg;
  BinaryOp binary_op = BinaryOp::kAdd;
  ReduceOp reduce_op = ReduceOp::kSum;
  Scalar value;            // kConst
  View view;               // kView
  std::vector<int> axes;   // kReduce
  int axis = 0;            // kCat, kGather, kScatterAdd, kCumsum
  ConvArgs conv;           // kConv2d, kConvTranspose2d
  PoolArgs pool;           // kPool2d
  AttentionArgs attention; // kAttention

  std::shared_ptr<Buffer> buffer;  // set once realized (op == kBuffer)
  const uint64_t id = next_id();

  bool realized() const { return op == Op::kBuffer; }
  // Turns this node into a realized kBuffer holding `b`.
  void set_realized(std::shared_ptr<Buffer> b);

 private:
  static uint64_t next_id();
};

NodePtr make_node(Op op, DType dtype, Shape shape, std::string device, std::vector<NodePtr> src = {});

}  // namespace nvhcq::tensor
