#include "tensor/graph_builder.h"

#include "base/error.h"
#include "tensor/backend.h"

namespace nvhcq::tensor::build {

Tensor make(Op op, DType dtype, const Shape& shape, const std::string& device, std::vector<NodePtr> src) {
  check_shape(shape, op_name(op));
  return Tensor(make_node(op, dtype, shape, device, std::move(src)));
}

Tensor view_op(const Tensor& t, const std::function<std::optional<View>(const View&)>& f) {
  NodePtr base;
  View v;
  if (t.node()->op == Op::kView) {
    base = t.node()->src[0];
    v = t.node()->view;
  } else {
    base = t.node();
    v = View::contiguous(t.shape());
  }
  std::optional<View> nv = f(v);
  if (!nv) {
    base = make(Op::kContiguous, t.dtype(), t.shape(), t.device(), {t.node()}).node();
    nv = f(View::contiguous(t.shape()));
    if (!nv) throw Error("internal: a view transform failed on a contiguous tensor");
  }
  check_shape(nv->shape, "view");
  if (nv->is_identity(base->shape)) return Tensor(base);
  auto node = make_node(Op::kView, base->dtype, nv->shape, base->device, {base});
  node->view = std::move(*nv);
  return Tensor(node);
}

Tensor constant(const Scalar& value, DType dtype, const Shape& shape, const std::string& device) {
  if (!backend_for(device).supports(dtype)) unsupported_dtype("tensors on this device", dtype);
  Tensor c = make(Op::kConst, dtype, {}, device, {});
  c.node()->value = value;
  if (shape.empty()) return c;
  check_shape(shape, "constant");
  View v;
  v.shape = shape;
  v.strides.assign(shape.size(), 0);
  auto node = make_node(Op::kView, dtype, shape, device, {c.node()});
  node->view = v;
  return Tensor(node);
}

Tensor scalar_operand(const Tensor& like, const Scalar& value) {
  return constant(value, scalar_dtype(like.dtype(), value), {}, like.device());
}

Tensor broadcast(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  const Shape& s = t.shape();
  if (s.size() > shape.size()) {
    throw Error("cannot broadcast shape " + shape_str(s) + " to " + shape_str(shape) + ": too many axes");
  }
  Shape padded(shape.size() - s.size(), 1);
  padded.insert(padded.end(), s.begin(), s.end());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (padded[d] != shape[d] && padded[d] != 1) {
      throw Error("cannot broadcast shape " + shape_str(s) + " to " + shape_str(shape));
    }
  }
  return view_op(t, [&](const View& v) -> std::optional<View> {
    auto r = v.reshape(padded);
    if (!r) return std::nullopt;
    return r->expand(shape);
  });
}

const std::string& same_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  const std::string* dev = nullptr;
  for (const Tensor* t : tensors) {
    if (!t->defined()) continue;
    if (dev == nullptr) {
      dev = &t->device();
    } else if (*dev != t->device()) {
      throw Error(std::string(op) + ": tensors are on different devices ('" + *dev + "' and '" + t->device() + "')");
    }
  }
  if (dev == nullptr) throw Error(std::string(op) + ": no tensor given");
  return *dev;
}

void unsupported_dtype(const char* op, DType t) {
  throw Error(std::string(op) + " is not supported for dtype " + dtype_name(t));
}

void require_defined(const char* op, const Tensor& t, const char* name) {
  if (!t.defined()) throw Error(std::string(op) + ": " + name + " is an undefined tensor");
}

void require_rank(const char* op, const Tensor& t, int n, const char* name) {
  if (t.ndim() != n) {
    throw Error(std::string(op) + ": " + name + " must have " + std::to_string(n) + " axes, got shape " +
                shape_str(t.shape()));
  }
}

Tensor unary(UnaryOp op, const Tensor& x) {
  require_defined(cpu::op_name(op), x, "input");
  DType t = x.dtype();
  const char* name = cpu::op_name(op);
  switch (op) {
    case UnaryOp::kFloor: case UnaryOp::kCeil: case UnaryOp::kRound: case UnaryOp::kTrunc:
      if (!is_float(t)) return x;
      break;
    case UnaryOp::kNeg: case UnaryOp::kAbs:
      if (t == DType::kBool) unsupported_dtype(name, t);
      break;
    case UnaryOp::kSign:
      if (t == DType::kBool) return x;
      break;
    default:
      break;
  }
  if (cpu::integer_only(op) && is_float(t)) unsupported_dtype(name, t);
  Tensor in = x;
  if (cpu::float_only(op) && !is_float(t)) {
    t = kDefaultFloat;
    in = x.cast(t);
  }
  Tensor out = make(Op::kUnary, cpu::returns_bool(op) ? DType::kBool : t, in.shape(), in.device(), {in.node()});
  out.node()->unary_op = op;
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = cpu::op_name(op);
  require_defined(name, a, "left operand");
  require_defined(name, b, "right operand");
  const std::string& device = same_device(name, {&a, &b});
  DType t = promote_types(a.dtype(), b.dtype());
  switch (op) {
    case BinaryOp::kDiv: t = float_dtype(t); break;
    case BinaryOp::kSub: case BinaryOp::kMod: case BinaryOp::kPow: case BinaryOp::kShl: case BinaryOp::kShr:
      if (t == DType::kBool) unsupported_dtype(name, t);
      break;
    default: break;
  }
  if (cpu::integer_only(op) && is_float(t)) unsupported_dtype(name, t);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor x = broadcast(a.cast(t), shape), y = broadcast(b.cast(t), shape);
  Tensor out = make(Op::kBinary, cpu::returns_bool(op) ? DType::kBool : t, shape, device, {x.node(), y.node()});
  out.node()->binary_op = op;
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  require_defined("where", cond, "condition");
  require_defined("where", a, "first value");
  require_defined("where", b, "second value");
  const std::string& device = same_device("where", {&cond, &a, &b});
  const DType t = promote_types(a.dtype(), b.dtype());
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor c = broadcast(cond, shape), x = broadcast(a.cast(t), shape), y = broadcast(b.cast(t), shape);
  return make(Op::kWhere, t, shape, device, {c.node(), x.node(), y.node()});
}

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, bool keepdim, DType out) {
  Shape shape = x.shape();
  for (int a : axes) shape[a] = 1;
  Tensor r = make(Op::kReduce, out, shape, x.device(), {x.node()});
  r.node()->reduce_op = op;
  r.node()->axes = axes;
  return keepdim ? r : squeeze_axes(r, axes);
}

Tensor squeeze_axes(const Tensor& x, const std::vector<int>& axes) {
  if (axes.empty()) return x;
  Shape shape;
  size_t k = 0;
  for (int d = 0; d < x.ndim(); ++d) {
    if (k < axes.size() && axes[k] == d) {
      ++k;
      continue;
    }
    shape.push_back(x.shape()[d]);
  }
  return x.reshape(shape);
}

Tensor in_float32(const Tensor& x, const std::function<Tensor(const Tensor&)>& f) {
  if (x.dtype() == DType::kF16 || x.dtype() == DType::kBF16) {
    Tensor r = f(x.cast(DType::kF32));
    return r.dtype() == DType::kF32 ? r.cast(x.dtype()) : r;
  }
  return f(x);
}

}  // namespace nvhcq::tensor::build
