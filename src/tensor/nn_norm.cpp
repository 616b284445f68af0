// Normalization layers, composed from reductions and elementwise ops (computed in
// f32 for f16/bf16 inputs).
#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/nn.h"

namespace nvhcq::tensor::nn {
namespace {

// Reshapes a per-channel vector [C] to broadcast over axis 1 of a rank-`ndim` tensor.
Tensor per_channel(const Tensor& v, int ndim, int64_t c, const char* op, const char* name) {
  if (v.shape() != Shape{c}) {
    throw Error(std::string(op) + ": " + name + " shape " + shape_str(v.shape()) + " should be [" + std::to_string(c) + "]");
  }
  Shape s(ndim, 1);
  s[1] = c;
  return v.reshape(s);
}

std::vector<int> trailing_axes(const Tensor& x, const Shape& normalized_shape, const char* op) {
  const int k = static_cast<int>(normalized_shape.size());
  bool ok = k >= 1 && k <= x.ndim();
  for (int i = 0; ok && i < k; ++i) ok = x.shape()[x.ndim() - k + i] == normalized_shape[i];
  if (!ok) {
    throw Error(std::string(op) + ": normalized shape " + shape_str(normalized_shape) +
                " does not match the trailing axes of input " + shape_str(x.shape()));
  }
  std::vector<int> axes;
  for (int i = 0; i < k; ++i) axes.push_back(x.ndim() - k + i);
  return axes;
}

void check_float(const char* op, const Tensor& x) {
  if (!is_float(x.dtype())) build::unsupported_dtype(op, x.dtype());
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, double eps) {
  build::require_defined("batch_norm", x, "input");
  build::require_defined("batch_norm", running_mean, "running_mean");
  build::require_defined("batch_norm", running_var, "running_var");
  build::same_device("batch_norm", {&x, &running_mean, &running_var, &weight, &bias});
  check_float("batch_norm", x);
  if (x.ndim() < 2) throw Error("batch_norm: input needs at least 2 axes, got " + shape_str(x.shape()));
  const int64_t c = x.shape()[1];
  const int nd = x.ndim();
  Tensor mean = per_channel(running_mean, nd, c, "batch_norm", "running_mean");
  Tensor var = per_channel(running_var, nd, c, "batch_norm", "running_var");
  Tensor w = weight.defined() ? per_channel(weight, nd, c, "batch_norm", "weight") : Tensor();
  Tensor b = bias.defined() ? per_channel(bias, nd, c, "batch_norm", "bias") : Tensor();
  return build::in_float32(x, [&](const Tensor& xf) {
    Tensor y = xf.sub(mean.cast(xf.dtype())).mul(var.cast(xf.dtype()).add(eps).rsqrt());
    if (w.defined()) y = y.mul(w.cast(xf.dtype()));
    if (b.defined()) y = y.add(b.cast(xf.dtype()));
    return y;
  });
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  build::require_defined("layer_norm", x, "input");
  build::same_device("layer_norm", {&x, &weight, &bias});
  check_float("layer_norm", x);
  auto axes = trailing_axes(x, normalized_shape, "layer_norm");
  for (const Tensor* p : {&weight, &bias}) {
    if (p->defined() && p->shape() != normalized_shape) {
      throw Error("layer_norm: weight/bias shape " + shape_str(p->shape()) + " should be " + shape_str(normalized_shape));
    }
  }
  return build::in_float32(x, [&](const Tensor& xf) {
    Tensor mean = xf.mean(axes, true);
    Tensor var = xf.var(axes, 0, true);
    Tensor y = xf.sub(mean).mul(var.add(eps).rsqrt());
    if (weight.defined()) y = y.mul(weight.cast(xf.dtype()));
    if (bias.defined()) y = y.add(bias.cast(xf.dtype()));
    return y;
  });
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, double eps) {
  build::require_defined("rms_norm", x, "input");
  build::same_device("rms_norm", {&x, &weight});
  check_float("rms_norm", x);
  auto axes = trailing_axes(x, normalized_shape, "rms_norm");
  if (weight.defined() && weight.shape() != normalized_shape) {
    throw Error("rms_norm: weight shape " + shape_str(weight.shape()) + " should be " + shape_str(normalized_shape));
  }
  return build::in_float32(x, [&](const Tensor& xf) {
    Tensor y = xf.mul(xf.mul(xf).mean(axes, true).add(eps).rsqrt());
    if (weight.defined()) y = y.mul(weight.cast(xf.dtype()));
    return y;
  });
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps) {
  build::require_defined("group_norm", x, "input");
  build::same_device("group_norm", {&x, &weight, &bias});
  check_float("group_norm", x);
  if (x.ndim() < 2) throw Error("group_norm: input needs at least 2 axes, got " + shape_str(x.shape()));
  const int64_t n = x.shape()[0], c = x.shape()[1];
  if (groups < 1 || c % groups != 0) {
    throw Error("group_norm: " + std::to_string(c) + " channels cannot form " + std::to_string(groups) + " groups");
  }
  const int nd = x.ndim();
  Tensor w = weight.defined() ? per_channel(weight, nd, c, "group_norm", "weight") : Tensor();
  Tensor b = bias.defined() ? per_channel(bias, nd, c, "group_norm", "bias") : Tensor();
  return build::in_float32(x, [&](const Tensor& xf) {
    if (x.numel() == 0) return xf;
    Tensor g = xf.reshape({n, groups, -1});
    Tensor y = g.sub(g.mean({2}, true)).mul(g.var({2}, 0, true).add(eps).rsqrt()).reshape(x.shape());
    if (w.defined()) y = y.mul(w.cast(xf.dtype()));
    if (b.defined()) y = y.add(b.cast(xf.dtype()));
    return y;
  });
}

}  // namespace nvhcq::tensor::nn
