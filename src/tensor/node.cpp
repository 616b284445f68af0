#include "tensor/node.h"

#include <atomic>

#include "tensor/buffer.h"

namespace nvhcq::tensor {

const char* op_name(Op op) {
  switch (op) {
    case Op::kBuffer: return "buffer";
    case Op::kConst: return "const";
    case Op::kView: return "view";
    case Op::kCat: return "cat";
    case Op::kContiguous: return "contiguous";
    case Op::kCast: return "cast";
    case Op::kUnary: return "unary";
    case Op::kBinary: return "binary";
    case Op::kWhere: return "where";
    case Op::kReduce: return "reduce";
    case Op::kMatmul: return "matmul";
    case Op::kConv2d: return "conv2d";
    case Op::kConvTranspose2d: return "conv_transpose2d";
    case Op::kPool2d: return "pool2d";
    case Op::kGather: return "gather";
    case Op::kScatterAdd: return "scatter_add";
    case Op::kCumsum: return "cumsum";
    case Op::kAttention: return "attention";
  }
  return "?";
}

void Node::set_realized(std::shared_ptr<Buffer> b) {
  op = Op::kBuffer;
  buffer = std::move(b);
  src.clear();
  axes.clear();
  view = View();
}

uint64_t Node::next_id() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

NodePtr make_node(Op op, DType dtype, Shape shape, std::string device, std::vector<NodePtr> src) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->device = std::move(device);
  n->src = std::move(src);
  return n;
}

}  // namespace nvhcq::tensor
