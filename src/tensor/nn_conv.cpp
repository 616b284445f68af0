// Convolutions and pooling: validation and library nodes.
#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/nn.h"

namespace nvhcq::tensor::nn {
namespace {

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

void check_positive(const char* op, const char* what, Size2 v, int64_t min) {
  if (v.h < min || v.w < min) {
    throw Error(std::string(op) + ": " + what + " must be >= " + std::to_string(min) + ", got (" +
                std::to_string(v.h) + ", " + std::to_string(v.w) + ")");
  }
}

DType float_operands(const char* op, std::initializer_list<const Tensor*> ts) {
  DType t = DType::kBool;
  bool first = true;
  for (const Tensor* x : ts) {
    if (!x->defined()) continue;
    t = first ? x->dtype() : promote_types(t, x->dtype());
    first = false;
  }
  if (!is_float(t)) build::unsupported_dtype(op, t);
  return t;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding, Size2 dilation,
              int64_t groups) {
  build::require_defined("conv2d", x, "input");
  build::require_defined("conv2d", weight, "weight");
  const std::string& device = build::same_device("conv2d", {&x, &weight, &bias});
  build::require_rank("conv2d", x, 4, "input");
  build::require_rank("conv2d", weight, 4, "weight");
  check_positive("conv2d", "stride", stride, 1);
  check_positive("conv2d", "dilation", dilation, 1);
  check_positive("conv2d", "padding", padding, 0);
  const DType t = float_operands("conv2d", {&x, &weight, &bias});
  const int64_t c = x.shape()[1], o = weight.shape()[0];
  if (groups < 1 || c % groups != 0 || o % groups != 0 || weight.shape()[1] * groups != c) {
    throw Error("conv2d: input " + shape_str(x.shape()) + " and weight " + shape_str(weight.shape()) +
                " do not match for groups=" + std::to_string(groups));
  }
  if (bias.defined() && bias.shape() != Shape{o}) {
    throw Error("conv2d: bias shape " + shape_str(bias.shape()) + " should be [" + std::to_string(o) + "]");
  }
  const int64_t oh = conv_out(x.shape()[2], weight.shape()[2], stride.h, padding.h, dilation.h);
  const int64_t ow = conv_out(x.shape()[3], weight.shape()[3], stride.w, padding.w, dilation.w);
  if (oh < 1 || ow < 1) {
    throw Error("conv2d: input " + shape_str(x.shape()) + " is too small for kernel " + shape_str(weight.shape()) +
                " with this padding and dilation");
  }
  std::vector<NodePtr> src = {x.cast(t).node(), weight.cast(t).node()};
  if (bias.defined()) src.push_back(bias.cast(t).node());
  Tensor out = build::make(Op::kConv2d, t, {x.shape()[0], o, oh, ow}, device, std::move(src));
  ConvArgs& a = out.node()->conv;
  a.stride[0] = stride.h, a.stride[1] = stride.w;
  a.padding[0] = padding.h, a.padding[1] = padding.w;
  a.dilation[0] = dilation.h, a.dilation[1] = dilation.w;
  a.groups = groups;
  a.has_bias = bias.defined();
  return out;
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  build::require_defined("conv1d", x, "input");
  build::require_defined("conv1d", weight, "weight");
  build::require_rank("conv1d", x, 3, "input");
  build::require_rank("conv1d", weight, 3, "weight");
  Tensor y = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, Size2(1, stride), Size2(0, padding),
                    Size2(1, dilation), groups);
  return y.squeeze(2);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding,
                        Size2 output_padding, int64_t groups, Size2 dilation) {
  build::require_defined("conv_transpose2d", x, "input");
  build::require_defined("conv_transpose2d", weight, "weight");
  const std::string& device = build::same_device("conv_transpose2d", {&x, &weight, &bias});
  build::require_rank("conv_transpose2d", x, 4, "input");
  build::require_rank("conv_transpose2d", weight, 4, "weight");
  check_positive("conv_transpose2d", "stride", stride, 1);
  check_positive("conv_transpose2d", "dilation", dilation, 1);
  check_positive("conv_transpose2d", "padding", padding, 0);
  check_positive("conv_transpose2d", "output_padding", output_padding, 0);
  if (output_padding.h >= std::max(stride.h, dilation.h) || output_padding.w >= std::max(stride.w, dilation.w)) {
    throw Error("conv_transpose2d: output_padding must be smaller than stride or dilation");
  }
  const DType t = float_operands("conv_transpose2d", {&x, &weight, &bias});
  const int64_t c = x.shape()[1];
  if (groups < 1 || c % groups != 0 || weight.shape()[0] != c) {
    throw Error("conv_transpose2d: input " + shape_str(x.shape()) + " and weight " + shape_str(weight.shape()) +
                " do not match for groups=" + std::to_string(groups));
  }
  const int64_t o = weight.shape()[1] * groups;
  if (bias.defined() && bias.shape() != Shape{o}) {
    throw Error("conv_transpose2d: bias shape " + shape_str(bias.shape()) + " should be [" + std::to_string(o) + "]");
  }
  const int64_t oh = (x.shape()[2] - 1) * stride.h - 2 * padding.h + dilation.h * (weight.shape()[2] - 1) + output_padding.h + 1;
  const int64_t ow = (x.shape()[3] - 1) * stride.w - 2 * padding.w + dilation.w * (weight.shape()[3] - 1) + output_padding.w + 1;
  if (oh < 1 || ow < 1) throw Error("conv_transpose2d: the output would be empty; reduce the padding");
  std::vector<NodePtr> src = {x.cast(t).node(), weight.cast(t).node()};
  if (bias.defined()) src.push_back(bias.cast(t).node());
  Tensor out = build::make(Op::kConvTranspose2d, t, {x.shape()[0], o, oh, ow}, device, std::move(src));
  ConvArgs& a = out.node()->conv;
  a.stride[0] = stride.h, a.stride[1] = stride.w;
  a.padding[0] = padding.h, a.padding[1] = padding.w;
  a.dilation[0] = dilation.h, a.dilation[1] = dilation.w;
  a.output_padding[0] = output_padding.h, a.output_padding[1] = output_padding.w;
  a.groups = groups;
  a.has_bias = bias.defined();
  return out;
}

namespace {

Tensor pool2d(const char* op, bool is_max, const Tensor& x, Size2 kernel, std::optional<Size2> stride_opt,
              Size2 padding, Size2 dilation, bool count_include_pad) {
  build::require_defined(op, x, "input");
  if (x.ndim() == 3) {
    return pool2d(op, is_max, x.unsqueeze(0), kernel, stride_opt, padding, dilation, count_include_pad).squeeze(0);
  }
  build::require_rank(op, x, 4, "input");
  const Size2 stride = stride_opt.value_or(kernel);
  check_positive(op, "kernel size", kernel, 1);
  check_positive(op, "stride", stride, 1);
  check_positive(op, "dilation", dilation, 1);
  check_positive(op, "padding", padding, 0);
  if (padding.h > kernel.h / 2 || padding.w > kernel.w / 2) {
    throw Error(std::string(op) + ": padding must be at most half the kernel size");
  }
  if (x.dtype() == DType::kBool || (!is_max && !is_float(x.dtype()))) build::unsupported_dtype(op, x.dtype());
  const int64_t oh = conv_out(x.shape()[2], kernel.h, stride.h, padding.h, dilation.h);
  const int64_t ow = conv_out(x.shape()[3], kernel.w, stride.w, padding.w, dilation.w);
  if (oh < 1 || ow < 1) throw Error(std::string(op) + ": input " + shape_str(x.shape()) + " is smaller than the window");
  Tensor out = build::make(Op::kPool2d, x.dtype(), {x.shape()[0], x.shape()[1], oh, ow}, x.device(), {x.node()});
  PoolArgs& a = out.node()->pool;
  a.kernel[0] = kernel.h, a.kernel[1] = kernel.w;
  a.stride[0] = stride.h, a.stride[1] = stride.w;
  a.padding[0] = padding.h, a.padding[1] = padding.w;
  a.dilation[0] = dilation.h, a.dilation[1] = dilation.w;
  a.max = is_max;
  a.count_include_pad = count_include_pad;
  return out;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding, Size2 dilation) {
  return pool2d("max_pool2d", true, x, kernel, stride, padding, dilation, true);
}

Tensor avg_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding, bool count_include_pad) {
  return pool2d("avg_pool2d", false, x, kernel, stride, padding, Size2(1), count_include_pad);
}

}  // namespace nvhcq::tensor::nn
