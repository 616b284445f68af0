#pragma once
// Elementwise kernels: unary, binary, ternary (where) and cast over strided,
// broadcast and padded operands. These op enums are the scalar-op vocabulary of
// the whole tensor layer (its graph nodes name them), and scalar_ops.h defines
// what each one computes.
//
// Inputs of unary/binary ops share one dtype T; the kernel computes in
// compute_type(T) (f32 for f16/bf16/f32, f64, or i64 for integers and bool) and
// stores to the output, whose dtype is T, or bool for comparisons and logical ops.
// Float-only ops on integer inputs and bitwise ops on float inputs throw Error.

#include <cstdint>

#include "cpu/strided.h"

namespace nvhcq::cpu {

enum class UnaryOp : uint8_t {
  kNeg, kAbs, kExp, kExp2, kLog, kLog2, kSqrt, kRsqrt, kReciprocal, kSin, kCos, kTan, kTanh,
  kSigmoid, kErf, kLog1p, kExpm1, kFloor, kCeil, kRound, kTrunc, kSign, kLogicalNot, kBitwiseNot,
  kIsNan, kIsInf,
};
inline constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kIsInf) + 1;

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kMod, kLt, kLe, kEq, kNe, kGt, kGe,
  kLogicalAnd, kLogicalOr, kLogicalXor, kBitAnd, kBitOr, kBitXor, kShl, kShr,
};
inline constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kShr) + 1;

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);

// Ops whose result is bool whatever the input dtype.
bool returns_bool(UnaryOp op);
bool returns_bool(BinaryOp op);
// Ops defined only for floats (the tensor layer casts integer inputs to float first).
bool float_only(UnaryOp op);
bool float_only(BinaryOp op);
// Ops defined only for integers and bool.
bool integer_only(UnaryOp op);
bool integer_only(BinaryOp op);

// All operands span `shape` (broadcast through zero strides). `out` is not masked.
void unary(UnaryOp op, int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a);
void binary(BinaryOp op, int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a,
            const StridedOperand& b);
// out = cond != 0 ? a : b; a, b and out share a dtype; cond may be any dtype.
void where(int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& cond,
           const StridedOperand& a, const StridedOperand& b);
// out = a converted to out.dtype (element.h's rules); a plain copy when dtypes match.
void cast_copy(int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a);

}  // namespace nvhcq::cpu
