#pragma once
// Shared helpers of the Tensor implementation files: node construction with
// validation, views, broadcasting, dtype handling. Not part of the public API.

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nvhcq::tensor::build {

Tensor make(Op op, DType dtype, const Shape& shape, const std::string& device, std::vector<NodePtr> src);

// Applies a view transform to t's view (composing with an existing View); when it
// returns nullopt, t is materialized first and the transform must succeed then.
Tensor view_op(const Tensor& t, const std::function<std::optional<View>(const View&)>& f);

// A constant of `dtype` broadcast to `shape` (a 0-d kConst node under a View).
Tensor constant(const Scalar& value, DType dtype, const Shape& shape, const std::string& device);
// A weak scalar operand next to `like` (dtype.h's scalar rules), 0-d.
Tensor scalar_operand(const Tensor& like, const Scalar& value);

// Left-pads with 1s to rank(shape), then expands.
Tensor broadcast(const Tensor& t, const Shape& shape);

// Throws unless all defined tensors live on one device; returns it.
const std::string& same_device(const char* op, std::initializer_list<const Tensor*> tensors);
// Throws "<op> is not supported for dtype <t>".
[[noreturn]] void unsupported_dtype(const char* op, DType t);
void require_defined(const char* op, const Tensor& t, const char* name);
// Throws unless t.ndim() == n.
void require_rank(const char* op, const Tensor& t, int n, const char* name);

// Elementwise nodes; operands are cast and broadcast here.
Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// A reduce node over normalized axes, dtype `out`, keepdim applied.
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, bool keepdim, DType out);
// Removes the listed (sorted, normalized) axes of extent 1.
Tensor squeeze_axes(const Tensor& x, const std::vector<int>& axes);

// Runs a composite op in f32 when x is f16/bf16 and casts the result back, so the
// composition rounds once (as a fused GPU kernel would).
Tensor in_float32(const Tensor& x, const std::function<Tensor(const Tensor&)>& f);

// Whether x's dtype is one of the float types (used to pick compute dtypes).
inline DType compute_float(DType t) { return t == DType::kF64 ? DType::kF64 : DType::kF32; }

}  // namespace nvhcq::tensor::build
