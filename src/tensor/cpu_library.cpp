#include "tensor/cpu_library.h"

#include <cstring>
#include <memory>

#include "base/error.h"
#include "cpu/attention.h"
#include "cpu/conv.h"
#include "cpu/elementwise.h"
#include "cpu/index_ops.h"
#include "cpu/matmul.h"
#include "tensor/cpu_operand.h"

namespace nvhcq::tensor {
namespace {

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kF32; }
template <> constexpr DType dtype_of<double>() { return DType::kF64; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kI64; }

// Writes a dense T array into `out` (dtype of the node) with conversion.
template <typename T>
void write_dense(const std::vector<T>& values, Buffer& out, DType dtype, const Shape& shape) {
  if (values.empty()) return;
  if (dtype == dtype_of<T>()) {
    std::memcpy(out.host_ptr(), values.data(), values.size() * sizeof(T));
    return;
  }
  const Strides st = contiguous_strides(shape);
  cpu::StridedOperand src, dst;
  src.data = const_cast<T*>(values.data());
  src.dtype = dtype_of<T>();
  src.strides = st.data();
  dst.data = out.host_ptr();
  dst.dtype = dtype;
  dst.strides = st.data();
  cpu::cast_copy(static_cast<int>(shape.size()), shape.data(), dst, src);
}

// An input operand without padding masks (library kernels read raw strides).
CpuOperand unmasked(const Node& src) {
  CpuOperand op(src);
  if (op.masked()) return CpuOperand(dense_copy(op, op.dtype()), op.dtype(), op.shape());
  return op;
}

void run_matmul(const Node& node, Buffer& out) {
  CpuOperand a = unmasked(*node.src[0]), b = unmasked(*node.src[1]);
  const int nd = static_cast<int>(node.shape.size());
  const int64_t m = a.shape()[nd - 2], k = a.shape()[nd - 1], n = b.shape()[nd - 1];
  auto matrix = [&](const CpuOperand& op) {
    cpu::MatrixOperand mo;
    cpu::StridedOperand so = op.get();
    mo.data = so.data;
    mo.dtype = so.dtype;
    mo.offset = so.offset;
    mo.row_stride = so.strides[nd - 2];
    mo.col_stride = so.strides[nd - 1];
    mo.batch_strides = so.strides;
    return mo;
  };
  cpu::matmul(nd - 2, node.shape.data(), m, n, k, matrix(a), matrix(b), out.host_ptr(), node.dtype);
}

template <typename T>
void run_conv(const Node& node, Buffer& out) {
  const Node& x = *node.src[0];
  const Node& w = *node.src[1];
  const bool transposed = node.op == Op::kConvTranspose2d;
  cpu::Conv2dShape s;
  s.n = x.shape[0];
  s.c_in = x.shape[1];
  s.h = x.shape[2];
  s.w = x.shape[3];
  s.c_out = node.shape[1];
  s.kh = w.shape[2];
  s.kw = w.shape[3];
  s.stride_h = node.conv.stride[0];
  s.stride_w = node.conv.stride[1];
  s.pad_h = node.conv.padding[0];
  s.pad_w = node.conv.padding[1];
  s.dil_h = node.conv.dilation[0];
  s.dil_w = node.conv.dilation[1];
  s.groups = node.conv.groups;
  s.out_h = node.shape[2];
  s.out_w = node.shape[3];
  auto xv = dense_vector<T>(CpuOperand(x));
  auto wv = dense_vector<T>(CpuOperand(w));
  std::vector<T> bv;
  if (node.conv.has_bias) bv = dense_vector<T>(CpuOperand(*node.src[2]));
  std::vector<T> result(static_cast<size_t>(numel(node.shape)));
  const T* bias = node.conv.has_bias ? bv.data() : nullptr;
  if (transposed) cpu::conv_transpose2d<T>(s, xv.data(), wv.data(), bias, result.data());
  else cpu::conv2d<T>(s, xv.data(), wv.data(), bias, result.data());
  write_dense(result, out, node.dtype, node.shape);
}

template <typename T>
void run_pool(const Node& node, Buffer& out) {
  const Node& x = *node.src[0];
  cpu::Pool2dShape s;
  s.n = x.shape[0];
  s.c = x.shape[1];
  s.h = x.shape[2];
  s.w = x.shape[3];
  s.kh = node.pool.kernel[0];
  s.kw = node.pool.kernel[1];
  s.stride_h = node.pool.stride[0];
  s.stride_w = node.pool.stride[1];
  s.pad_h = node.pool.padding[0];
  s.pad_w = node.pool.padding[1];
  s.dil_h = node.pool.dilation[0];
  s.dil_w = node.pool.dilation[1];
  s.out_h = node.shape[2];
  s.out_w = node.shape[3];
  auto xv = dense_vector<T>(CpuOperand(x));
  std::vector<T> result(static_cast<size_t>(numel(node.shape)));
  if (node.pool.max) {
    cpu::max_pool2d<T>(s, xv.data(), result.data());
  } else {
    if constexpr (std::is_floating_point_v<T>) cpu::avg_pool2d<T>(s, node.pool.count_include_pad, xv.data(), result.data());
    else throw Error("avg_pool2d needs a float dtype");
  }
  write_dense(result, out, node.dtype, node.shape);
}

template <typename T>
void run_attention(const Node& node, Buffer& out) {
  const Shape& qs = node.src[0]->shape;
  const Shape& ks = node.src[1]->shape;
  const Shape& vs = node.src[2]->shape;
  const size_t nd = qs.size();
  cpu::AttentionShape s;
  s.batch = 1;
  for (size_t d = 0; d + 2 < nd; ++d) s.batch *= qs[d];
  s.q_len = qs[nd - 2];
  s.head_dim = qs[nd - 1];
  s.kv_len = ks[nd - 2];
  s.value_dim = vs[nd - 1];
  auto q = dense_vector<T>(CpuOperand(*node.src[0]));
  auto k = dense_vector<T>(CpuOperand(*node.src[1]));
  auto v = dense_vector<T>(CpuOperand(*node.src[2]));
  std::vector<T> mask;
  if (node.attention.has_mask) mask = dense_vector<T>(CpuOperand(*node.src[3]));
  std::vector<T> result(static_cast<size_t>(numel(node.shape)));
  if (!result.empty()) {
    cpu::attention<T>(s, q.data(), k.data(), v.data(), node.attention.has_mask ? mask.data() : nullptr,
                      s.q_len * s.kv_len, s.kv_len, 1, node.attention.causal, static_cast<T>(node.attention.scale),
                      result.data());
  }
  write_dense(result, out, node.dtype, node.shape);
}

}  // namespace

void run_library_node(const Node& node, Buffer& out) {
  const int ndim = static_cast<int>(node.shape.size());
  switch (node.op) {
    case Op::kMatmul:
      run_matmul(node, out);
      return;
    case Op::kConv2d:
    case Op::kConvTranspose2d:
      if (node.dtype == DType::kF64) run_conv<double>(node, out);
      else run_conv<float>(node, out);
      return;
    case Op::kPool2d:
      if (node.dtype == DType::kF64) run_pool<double>(node, out);
      else if (is_float(node.dtype)) run_pool<float>(node, out);
      else run_pool<int64_t>(node, out);
      return;
    case Op::kAttention:
      if (node.dtype == DType::kF64) run_attention<double>(node, out);
      else run_attention<float>(node, out);
      return;
    case Op::kGather: {
      CpuOperand x = unmasked(*node.src[0]), index = unmasked(*node.src[1]);
      cpu::gather(ndim, node.shape.data(), node.axis, x.get(), x.shape()[node.axis], index.get(), out.host_ptr());
      return;
    }
    case Op::kScatterAdd: {
      CpuOperand x(*node.src[0]);
      CpuOperand index = unmasked(*node.src[1]), src = unmasked(*node.src[2]);
      CpuOperand dst(std::shared_ptr<Buffer>(&out, [](Buffer*) {}), node.dtype, node.shape);
      cpu::cast_copy(ndim, node.shape.data(), dst.get(), x.get());
      cpu::scatter_add(ndim, index.shape().data(), node.axis, node.shape.data(), out.host_ptr(), node.dtype,
                       index.get(), src.get());
      return;
    }
    case Op::kCumsum: {
      CpuOperand x = unmasked(*node.src[0]);
      cpu::cumsum(ndim, node.shape.data(), node.axis, x.get(), out.host_ptr(), node.dtype);
      return;
    }
    default:
      throw Error(std::string("internal: the CPU backend has no kernel for op ") + op_name(node.op));
  }
}

}  // namespace nvhcq::tensor
