// Reductions. sum/prod/max/min/argmax/argmin are reduce nodes; the statistics
// (mean, var, std, logsumexp, softmax) are compositions computed in f32 for
// f16/bf16 inputs.
#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

DType sum_dtype(DType t) { return is_float(t) ? t : DType::kI64; }

int64_t reduced_count(const Tensor& x, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= x.shape()[a];
  return n;
}

void require_nonempty(const char* op, const Tensor& x, const std::vector<int>& axes) {
  if (reduced_count(x, axes) == 0) {
    throw Error(std::string(op) + " of a tensor with shape " + shape_str(x.shape()) +
                " over a zero-size axis has no value");
  }
}

}  // namespace

Tensor Tensor::sum(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "sum");
  return build::reduce(ReduceOp::kSum, *this, ax, keepdim, sum_dtype(dtype()));
}

Tensor Tensor::prod(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "prod");
  return build::reduce(ReduceOp::kProd, *this, ax, keepdim, sum_dtype(dtype()));
}

Tensor Tensor::max(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "max");
  require_nonempty("max", *this, ax);
  return build::reduce(ReduceOp::kMax, *this, ax, keepdim, dtype());
}

Tensor Tensor::min(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "min");
  require_nonempty("min", *this, ax);
  return build::reduce(ReduceOp::kMin, *this, ax, keepdim, dtype());
}

Tensor Tensor::any(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "any");
  if (reduced_count(*this, ax) == 0) return build::reduce(ReduceOp::kSum, cast(DType::kBool), ax, keepdim, DType::kBool);
  return build::reduce(ReduceOp::kMax, cast(DType::kBool), ax, keepdim, DType::kBool);
}

Tensor Tensor::all(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "all");
  if (reduced_count(*this, ax) == 0) return build::reduce(ReduceOp::kProd, cast(DType::kBool), ax, keepdim, DType::kBool);
  return build::reduce(ReduceOp::kMin, cast(DType::kBool), ax, keepdim, DType::kBool);
}

Tensor Tensor::mean(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "mean");
  const double count = static_cast<double>(reduced_count(*this, ax));
  return build::in_float32(cast(float_dtype(dtype())), [&](const Tensor& x) {
    return build::reduce(ReduceOp::kSum, x, ax, keepdim, x.dtype()).div(count);
  });
}

Tensor Tensor::var(const std::vector<int>& axes, int64_t correction, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "var");
  const int64_t count = reduced_count(*this, ax);
  const double divisor = static_cast<double>(std::max<int64_t>(count - correction, 0));
  return build::in_float32(cast(float_dtype(dtype())), [&](const Tensor& x) {
    Tensor d = x.sub(x.mean(ax, true));
    return build::reduce(ReduceOp::kSum, d.mul(d), ax, keepdim, x.dtype()).div(divisor);
  });
}

Tensor Tensor::std(const std::vector<int>& axes, int64_t correction, bool keepdim) const {
  return var(axes, correction, keepdim).sqrt();
}

Tensor Tensor::logsumexp(const std::vector<int>& axes, bool keepdim) const {
  auto ax = normalize_axes(axes, ndim(), "logsumexp");
  require_nonempty("logsumexp", *this, ax);
  return build::in_float32(cast(float_dtype(dtype())), [&](const Tensor& x) {
    Tensor m = x.max(ax, true);
    Tensor shift = where(m.isinf(), Scalar(0), m);  // all -inf (or +inf) rows stay finite here
    Tensor r = x.sub(shift).exp().sum(ax, true).log().add(shift);
    return keepdim ? r : build::squeeze_axes(r, ax);
  });
}

Tensor Tensor::softmax(int axis) const {
  const int a = normalize_axis(axis, std::max(ndim(), 1), "softmax");
  if (ndim() == 0) return full({}, 1.0, float_dtype(dtype()), device());
  return build::in_float32(cast(float_dtype(dtype())), [&](const Tensor& x) {
    if (x.shape()[a] == 0) return x;
    Tensor e = x.sub(x.max({a}, true)).exp();
    return e.div(e.sum({a}, true));
  });
}

Tensor Tensor::log_softmax(int axis) const {
  const int a = normalize_axis(axis, std::max(ndim(), 1), "log_softmax");
  if (ndim() == 0) return full({}, 0.0, float_dtype(dtype()), device());
  return build::in_float32(cast(float_dtype(dtype())), [&](const Tensor& x) {
    if (x.shape()[a] == 0) return x;
    return x.sub(x.logsumexp({a}, true));
  });
}

Tensor Tensor::argmax(std::optional<int> axis, bool keepdim) const {
  if (!axis) {
    if (numel() == 0) throw Error("argmax of an empty tensor has no value");
    Tensor r = flatten().argmax(0, false);
    return keepdim ? r.reshape(Shape(shape().size(), 1)) : r;
  }
  const int a = normalize_axis(*axis, std::max(ndim(), 1), "argmax");
  if (ndim() == 0) return zeros({}, DType::kI64, device());
  require_nonempty("argmax", *this, {a});
  return build::reduce(ReduceOp::kArgMax, *this, {a}, keepdim, DType::kI64);
}

Tensor Tensor::argmin(std::optional<int> axis, bool keepdim) const {
  if (!axis) {
    if (numel() == 0) throw Error("argmin of an empty tensor has no value");
    Tensor r = flatten().argmin(0, false);
    return keepdim ? r.reshape(Shape(shape().size(), 1)) : r;
  }
  const int a = normalize_axis(*axis, std::max(ndim(), 1), "argmin");
  if (ndim() == 0) return zeros({}, DType::kI64, device());
  require_nonempty("argmin", *this, {a});
  return build::reduce(ReduceOp::kArgMin, *this, {a}, keepdim, DType::kI64);
}

Tensor Tensor::cumsum(int axis) const {
  const int a = normalize_axis(axis, std::max(ndim(), 1), "cumsum");
  const DType out = sum_dtype(dtype());
  if (ndim() == 0) return cast(out);
  Tensor r = build::make(Op::kCumsum, out, shape(), device(), {node()});
  r.node()->axis = a;
  return r;
}

}  // namespace nvhcq::tensor
