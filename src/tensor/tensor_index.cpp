// Index-driven ops: gather, scatter_add, index_select, masked_fill.
#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

void require_index(const char* op, const Tensor& index) {
  build::require_defined(op, index, "index");
  if (!is_int(index.dtype())) {
    throw Error(std::string(op) + ": index must have an integer dtype, got " + dtype_name(index.dtype()));
  }
}

}  // namespace

Tensor Tensor::gather(int axis, const Tensor& index) const {
  require_index("gather", index);
  build::same_device("gather", {this, &index});
  const int a = normalize_axis(axis, std::max(ndim(), 1), "gather");
  if (index.ndim() != ndim()) {
    throw Error("gather: index shape " + shape_str(index.shape()) + " must have as many axes as input shape " +
                shape_str(shape()));
  }
  if (ndim() == 0) return reshape({1}).gather(0, index.reshape({1})).reshape({});
  for (int d = 0; d < ndim(); ++d) {
    if (d != a && index.shape()[d] > shape()[d]) {
      throw Error("gather: index shape " + shape_str(index.shape()) + " exceeds input shape " + shape_str(shape()) +
                  " along axis " + std::to_string(d));
    }
  }
  if (shape()[a] == 0 && index.numel() > 0) throw Error("gather: cannot index an axis of size 0");
  Tensor out = build::make(Op::kGather, dtype(), index.shape(), device(), {node(), index.node()});
  out.node()->axis = a;
  return out;
}

Tensor Tensor::scatter_add(int axis, const Tensor& index, const Tensor& src) const {
  require_index("scatter_add", index);
  build::require_defined("scatter_add", src, "src");
  build::same_device("scatter_add", {this, &index, &src});
  const int a = normalize_axis(axis, std::max(ndim(), 1), "scatter_add");
  if (index.ndim() != ndim() || src.ndim() != ndim()) {
    throw Error("scatter_add: input " + shape_str(shape()) + ", index " + shape_str(index.shape()) + " and src " +
                shape_str(src.shape()) + " must have the same number of axes");
  }
  if (ndim() == 0) return reshape({1}).scatter_add(0, index.reshape({1}), src.reshape({1})).reshape({});
  Tensor s = src;
  for (int d = 0; d < ndim(); ++d) {
    if (index.shape()[d] > src.shape()[d] || (d != a && index.shape()[d] > shape()[d])) {
      throw Error("scatter_add: index shape " + shape_str(index.shape()) + " exceeds src " + shape_str(src.shape()) +
                  " or input " + shape_str(shape()) + " along axis " + std::to_string(d));
    }
    if (index.shape()[d] < src.shape()[d]) s = s.slice(d, 0, index.shape()[d]);
  }
  Tensor out = build::make(Op::kScatterAdd, dtype(), shape(), device(), {node(), index.node(), s.cast(dtype()).node()});
  out.node()->axis = a;
  return out;
}

Tensor Tensor::index_select(int axis, const Tensor& index) const {
  require_index("index_select", index);
  if (index.ndim() > 1) throw Error("index_select: index must have at most one axis, got " + shape_str(index.shape()));
  const int a = normalize_axis(axis, std::max(ndim(), 1), "index_select");
  if (ndim() == 0) return reshape({1}).index_select(0, index).reshape(index.ndim() == 0 ? Shape{} : Shape{index.numel()});
  Tensor idx = index.reshape({index.numel()});
  Shape view_shape(ndim(), 1), out_shape = shape();
  view_shape[a] = idx.numel();
  out_shape[a] = idx.numel();
  return gather(a, idx.reshape(view_shape).expand(out_shape));
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  build::require_defined("masked_fill", mask, "mask");
  if (mask.dtype() != DType::kBool) {
    throw Error(std::string("masked_fill: mask must have dtype bool, got ") + dtype_name(mask.dtype()));
  }
  Tensor out = where(mask, build::constant(value, dtype(), {}, device()), *this);
  if (out.shape() != shape()) {
    throw Error("masked_fill: mask shape " + shape_str(mask.shape()) + " does not broadcast to " + shape_str(shape()));
  }
  return out;
}

}  // namespace nvhcq::tensor
