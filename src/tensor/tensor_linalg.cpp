// matmul (with batch broadcasting and 1-D operands, as NumPy/PyTorch) and dot.
#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {

Tensor Tensor::matmul(const Tensor& o) const {
  build::require_defined("matmul", *this, "left operand");
  build::require_defined("matmul", o, "right operand");
  const std::string& device = build::same_device("matmul", {this, &o});
  if (ndim() == 0 || o.ndim() == 0) {
    throw Error("matmul: operands need at least one axis, got shapes " + shape_str(shape()) + " and " +
                shape_str(o.shape()));
  }
  const DType t = promote_types(dtype(), o.dtype());
  if (t == DType::kBool) build::unsupported_dtype("matmul", t);
  const bool a_vec = ndim() == 1, b_vec = o.ndim() == 1;
  Tensor a = a_vec ? unsqueeze(0) : *this;
  Tensor b = b_vec ? o.unsqueeze(1) : o;
  const int na = a.ndim(), nb = b.ndim();
  const int64_t m = a.shape()[na - 2], k = a.shape()[na - 1], k2 = b.shape()[nb - 2], n = b.shape()[nb - 1];
  if (k != k2) {
    throw Error("matmul: shapes " + shape_str(shape()) + " and " + shape_str(o.shape()) + " do not align (" +
                std::to_string(k) + " != " + std::to_string(k2) + ")");
  }
  Shape batch = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                 Shape(b.shape().begin(), b.shape().end() - 2), "matmul");
  Shape sa = batch, sb = batch, so = batch;
  sa.insert(sa.end(), {m, k});
  sb.insert(sb.end(), {k, n});
  so.insert(so.end(), {m, n});
  Tensor x = build::broadcast(a.cast(t), sa), y = build::broadcast(b.cast(t), sb);
  Tensor out = build::make(Op::kMatmul, t, so, device, {x.node(), y.node()});
  if (a_vec) out = build::squeeze_axes(out, {out.ndim() - 2});
  if (b_vec) out = build::squeeze_axes(out, {out.ndim() - 1});
  return out;
}

Tensor Tensor::dot(const Tensor& o) const {
  build::require_defined("dot", o, "right operand");
  if (ndim() != 1 || o.ndim() != 1 || shape() != o.shape()) {
    throw Error("dot: needs two 1-D tensors of equal length, got " + shape_str(shape()) + " and " +
                shape_str(o.shape()));
  }
  if (promote_types(dtype(), o.dtype()) == DType::kBool) build::unsupported_dtype("dot", DType::kBool);
  return mul(o).sum();
}

}  // namespace nvhcq::tensor
