// Names and classification of the elementwise ops (elementwise.h).
#include "cpu/elementwise.h"

namespace nvhcq::cpu {

const char* op_name(UnaryOp op) {
  static const char* const names[kNumUnaryOps] = {
      "neg", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh",
      "sigmoid", "erf", "log1p", "expm1", "floor", "ceil", "round", "trunc", "sign", "logical_not",
      "bitwise_not", "isnan", "isinf"};
  return names[static_cast<int>(op)];
}

const char* op_name(BinaryOp op) {
  static const char* const names[kNumBinaryOps] = {
      "add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod", "lt", "le", "eq", "ne", "gt", "ge",
      "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "shl", "shr"};
  return names[static_cast<int>(op)];
}

bool returns_bool(UnaryOp op) {
  return op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsInf;
}

bool returns_bool(BinaryOp op) {
  switch (op) {
    case BinaryOp::kLt: case BinaryOp::kLe: case BinaryOp::kEq: case BinaryOp::kNe: case BinaryOp::kGt:
    case BinaryOp::kGe: case BinaryOp::kLogicalAnd: case BinaryOp::kLogicalOr: case BinaryOp::kLogicalXor:
      return true;
    default:
      return false;
  }
}

bool float_only(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp: case UnaryOp::kExp2: case UnaryOp::kLog: case UnaryOp::kLog2: case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt: case UnaryOp::kReciprocal: case UnaryOp::kSin: case UnaryOp::kCos: case UnaryOp::kTan:
    case UnaryOp::kTanh: case UnaryOp::kSigmoid: case UnaryOp::kErf: case UnaryOp::kLog1p: case UnaryOp::kExpm1:
      return true;
    default:
      return false;
  }
}

bool float_only(BinaryOp op) { return op == BinaryOp::kDiv; }

bool integer_only(UnaryOp op) { return op == UnaryOp::kBitwiseNot; }

bool integer_only(BinaryOp op) {
  return op == BinaryOp::kBitAnd || op == BinaryOp::kBitOr || op == BinaryOp::kBitXor || op == BinaryOp::kShl ||
         op == BinaryOp::kShr;
}

}  // namespace nvhcq::cpu
