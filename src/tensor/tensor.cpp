// Tensor basics: properties, realization, reading data, casts and copies.
#include "tensor/tensor.h"

#include <cstring>
#include <sstream>

#include "base/error.h"
#include "cpu/elementwise.h"
#include "tensor/backend.h"
#include "tensor/graph_builder.h"
#include "tensor/realize.h"

namespace nvhcq::tensor {
namespace {

const Node& checked(const NodePtr& n) {
  if (!n) throw Error("operation on an undefined tensor");
  return *n;
}

}  // namespace

namespace detail {

void check_count(size_t count, const Shape& shape) {
  check_shape(shape, "from_vector");
  if (static_cast<int64_t>(count) != numel(shape)) {
    throw Error("from_vector: " + std::to_string(count) + " values do not fill shape " + shape_str(shape) + " (" +
                std::to_string(numel(shape)) + " elements)");
  }
}

void read_elements(const Tensor& t, DType dtype, void* out) {
  t.realize();
  const NodePtr& base = base_of(t.node());
  View v = t.node()->op == Op::kView ? t.node()->view : View::contiguous(t.shape());
  if (t.numel() == 0) return;
  Buffer& buf = *base->buffer;
  void* host = buf.host_ptr();
  std::vector<uint8_t> staging;
  if (host == nullptr) {
    staging.resize(buf.bytes());
    buf.backend().copy_out(buf, 0, staging.data(), buf.bytes());
    host = staging.data();
  }
  std::vector<int64_t> lo, hi;
  for (auto& [l, h] : v.valid) {
    lo.push_back(l);
    hi.push_back(h);
  }
  cpu::StridedOperand in;
  in.data = host;
  in.dtype = base->dtype;
  in.offset = v.offset;
  in.strides = v.strides.data();
  if (v.masked()) {
    in.valid_lo = lo.data();
    in.valid_hi = hi.data();
    in.pad_float = v.pad_value.to_double();
    in.pad_int = v.pad_value.to_int();
  }
  const Strides dense = contiguous_strides(v.shape);
  cpu::StridedOperand dst;
  dst.data = out;
  dst.dtype = dtype;
  dst.strides = dense.data();
  cpu::cast_copy(static_cast<int>(v.shape.size()), v.shape.data(), dst, in);
}

}  // namespace detail

const Shape& Tensor::shape() const { return checked(node_).shape; }
DType Tensor::dtype() const { return checked(node_).dtype; }
const std::string& Tensor::device() const { return checked(node_).device; }

int64_t Tensor::size(int axis) const { return shape()[normalize_axis(axis, ndim(), "size")]; }

Strides Tensor::strides() const {
  const Node& n = checked(node_);
  return n.op == Op::kView ? n.view.strides : contiguous_strides(n.shape);
}

bool Tensor::is_contiguous() const {
  const Node& n = checked(node_);
  return n.op != Op::kView || n.view.is_contiguous();
}

bool Tensor::is_realized() const { return base_of(node_)->realized(); }

const Tensor& Tensor::realize() const {
  checked(node_);
  realize_nodes({node_});
  return *this;
}

void Tensor::realize_all(const std::vector<Tensor>& tensors) {
  std::vector<NodePtr> nodes;
  for (const auto& t : tensors) nodes.push_back(t.node());
  realize_nodes(nodes);
}

std::vector<uint8_t> Tensor::to_bytes() const {
  std::vector<uint8_t> out(static_cast<size_t>(numel()) * dtype_size(dtype()));
  detail::read_elements(*this, dtype(), out.data());
  return out;
}

Tensor Tensor::from_data(const void* data, DType dtype, const Shape& shape, const std::string& device) {
  check_shape(shape, "from_data");
  Backend& backend = backend_for(device);
  if (!backend.supports(dtype)) build::unsupported_dtype(("tensors on device '" + device + "'").c_str(), dtype);
  const size_t bytes = static_cast<size_t>(tensor::numel(shape)) * dtype_size(dtype);
  auto buf = backend.allocate(bytes);
  if (bytes) backend.copy_in(*buf, 0, data, bytes);
  auto node = make_node(Op::kBuffer, dtype, shape, device);
  node->buffer = std::move(buf);
  return Tensor(node);
}

Tensor Tensor::to(const std::string& device) const {
  if (device == this->device()) return *this;
  std::vector<uint8_t> bytes = to_bytes();
  return from_data(bytes.data(), dtype(), shape(), device);
}

Tensor Tensor::cast(DType dtype) const {
  if (dtype == this->dtype()) return *this;
  if (!backend_for(device()).supports(dtype)) {
    build::unsupported_dtype(("tensors on device '" + device() + "'").c_str(), dtype);
  }
  return build::make(Op::kCast, dtype, shape(), device(), {node_});
}

Tensor Tensor::contiguous() const {
  const Node& n = checked(node_);
  if (n.op != Op::kView) return *this;
  return build::make(Op::kContiguous, dtype(), shape(), device(), {node_});
}

Tensor Tensor::clone() const {
  checked(node_);
  return build::make(Op::kContiguous, dtype(), shape(), device(), {node_});
}

std::string Tensor::to_string() const {
  std::ostringstream out;
  out << "Tensor(shape=" << shape_str(shape()) << ", dtype=" << dtype_name(dtype()) << ", device=" << device();
  if (numel() <= 64) {
    out << ", values=[";
    if (is_float(dtype())) {
      auto v = to_vector<double>();
      for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
    } else {
      auto v = to_vector<int64_t>();
      for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
    }
    out << "]";
  }
  out << ")";
  return out.str();
}

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return a.div(b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return build::scalar_operand(b, a).add(b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return build::scalar_operand(b, a).sub(b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return build::scalar_operand(b, a).mul(b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return build::scalar_operand(b, a).div(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }

}  // namespace nvhcq::tensor
