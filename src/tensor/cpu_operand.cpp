#include "tensor/cpu_operand.h"

#include <cstring>

#include "base/error.h"
#include "cpu/elementwise.h"
#include "tensor/backend.h"

namespace nvhcq::tensor {
namespace {

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kF32; }
template <> constexpr DType dtype_of<double>() { return DType::kF64; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kI64; }

}  // namespace

CpuOperand::CpuOperand(const Node& src) {
  const Node* base = &src;
  if (src.op == Op::kView) {
    base = src.src[0].get();
    view_ = src.view;
  } else {
    view_ = View::contiguous(src.shape);
  }
  if (!base->realized()) throw Error(std::string("internal: CPU kernel input (") + op_name(base->op) + ") not realized");
  buffer_ = base->buffer;
  dtype_ = base->dtype;
  for (auto& [lo, hi] : view_.valid) {
    lo_.push_back(lo);
    hi_.push_back(hi);
  }
}

CpuOperand::CpuOperand(std::shared_ptr<Buffer> buffer, DType dtype, const Shape& shape)
    : buffer_(std::move(buffer)), dtype_(dtype), view_(View::contiguous(shape)) {}

cpu::StridedOperand CpuOperand::get() const {
  cpu::StridedOperand op;
  op.data = buffer_->host_ptr();
  op.dtype = dtype_;
  op.offset = view_.offset;
  op.strides = view_.strides.data();
  if (view_.masked()) {
    op.valid_lo = lo_.data();
    op.valid_hi = hi_.data();
    op.pad_float = view_.pad_value.to_double();
    op.pad_int = view_.pad_value.to_int();
  }
  return op;
}

std::shared_ptr<Buffer> dense_copy(const CpuOperand& op, DType dtype) {
  const Shape& shape = op.shape();
  auto buf = backend_for("cpu").allocate(static_cast<size_t>(numel(shape)) * dtype_size(dtype));
  CpuOperand out(buf, dtype, shape);
  cpu::cast_copy(static_cast<int>(shape.size()), shape.data(), out.get(), op.get());
  return buf;
}

template <typename T>
std::vector<T> dense_vector(const CpuOperand& op) {
  const Shape& shape = op.shape();
  std::vector<T> values(static_cast<size_t>(numel(shape)));
  if (values.empty()) return values;
  View v = View::contiguous(shape);
  cpu::StridedOperand out;
  out.data = values.data();
  out.dtype = dtype_of<T>();
  out.strides = v.strides.data();
  cpu::cast_copy(static_cast<int>(shape.size()), shape.data(), out, op.get());
  return values;
}

template <typename T>
std::shared_ptr<Buffer> buffer_from(const std::vector<T>& values, const Shape& shape, DType dtype) {
  auto buf = backend_for("cpu").allocate(static_cast<size_t>(numel(shape)) * dtype_size(dtype));
  if (values.empty()) return buf;
  if (dtype == dtype_of<T>()) {
    std::memcpy(buf->host_ptr(), values.data(), values.size() * sizeof(T));
    return buf;
  }
  View v = View::contiguous(shape);
  cpu::StridedOperand in;
  in.data = const_cast<T*>(values.data());
  in.dtype = dtype_of<T>();
  in.strides = v.strides.data();
  CpuOperand out(buf, dtype, shape);
  cpu::cast_copy(static_cast<int>(shape.size()), shape.data(), out.get(), in);
  return buf;
}

template std::vector<float> dense_vector<float>(const CpuOperand&);
template std::vector<double> dense_vector<double>(const CpuOperand&);
template std::vector<int64_t> dense_vector<int64_t>(const CpuOperand&);
template std::shared_ptr<Buffer> buffer_from<float>(const std::vector<float>&, const Shape&, DType);
template std::shared_ptr<Buffer> buffer_from<double>(const std::vector<double>&, const Shape&, DType);
template std::shared_ptr<Buffer> buffer_from<int64_t>(const std::vector<int64_t>&, const Shape&, DType);

}  // namespace nvhcq::tensor
