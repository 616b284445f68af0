#pragma once
// CUDA C spellings of the scalar vocabulary of the tensor layer: storage and
// compute types per dtype, loads, stores, casts and every unary/binary op, as
// expressions over already-computed operand variables. The helpers they call
// (nvt_*) live in src/kernels/tensor_common.cuh and define the same semantics as
// cpu/element.h and cpu/scalar_ops.h, so a fused GPU kernel computes what the CPU
// backend computes node by node.
//
// Compute types: "float" for f16/bf16/f32, "long long" for integers and bool.
// f64 has no GPU compute type (the GPU backends refuse f64 tensors).

#include <string>

#include "tensor/dtype.h"
#include "tensor/node.h"
#include "tensor/scalar.h"

namespace nvhcq::tensor::codegen {

// "float" or "long long". Throws Error for f64.
const char* compute_ctype(DType t);
// The C type buffers of dtype t are declared with: float, unsigned short (f16,
// bf16), signed char, unsigned char (u8, bool), short, int, long long.
const char* storage_ctype(DType t);

// Converts a storage value expression to the compute type.
std::string load_expr(DType t, const std::string& storage_value);
// Converts a compute value of dtype t to its storage type.
std::string store_expr(DType t, const std::string& compute_value);
// Converts a double (a cumsum accumulator) to the storage type of float dtype t,
// rounding once.
std::string store_double_expr(DType t, const std::string& d);
// Rounds a compute value of dtype t as if stored and loaded again (f16/bf16
// rounding, integer wrapping, bool normalization); the identity for f32/i64.
std::string round_expr(DType t, const std::string& compute_value);
// Converts a compute value of dtype `from` to a compute value of dtype `to` with
// the cast rules (saturating float -> int, wrapping int -> int, != 0 for bool).
std::string cast_expr(DType from, DType to, const std::string& compute_value);

// A constant of dtype t as a compute-type literal.
std::string literal(DType t, const Scalar& value);
std::string float_literal(double v);

// The result of `op` on operand a (a compute value of dtype t), in the compute
// type of the result (bool results are 0/1 in long long).
std::string unary_expr(UnaryOp op, DType t, const std::string& a);
std::string binary_expr(BinaryOp op, DType t, const std::string& a, const std::string& b);

// Reduction identity and combine step for values of dtype t (the source dtype).
std::string reduce_identity(ReduceOp op, DType t);
std::string reduce_combine(ReduceOp op, DType t, const std::string& acc, const std::string& v);

}  // namespace nvhcq::tensor::codegen
