// Elementwise Tensor ops: primitives map to one node, the rest are compositions.
#include <cmath>

#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {

using build::binary;
using build::unary;

Tensor Tensor::neg() const { return unary(UnaryOp::kNeg, *this); }
Tensor Tensor::abs() const { return unary(UnaryOp::kAbs, *this); }
Tensor Tensor::exp() const { return unary(UnaryOp::kExp, *this); }
Tensor Tensor::exp2() const { return unary(UnaryOp::kExp2, *this); }
Tensor Tensor::log() const { return unary(UnaryOp::kLog, *this); }
Tensor Tensor::log2() const { return unary(UnaryOp::kLog2, *this); }
Tensor Tensor::log1p() const { return unary(UnaryOp::kLog1p, *this); }
Tensor Tensor::expm1() const { return unary(UnaryOp::kExpm1, *this); }
Tensor Tensor::sqrt() const { return unary(UnaryOp::kSqrt, *this); }
Tensor Tensor::rsqrt() const { return unary(UnaryOp::kRsqrt, *this); }
Tensor Tensor::reciprocal() const { return unary(UnaryOp::kReciprocal, *this); }
Tensor Tensor::sin() const { return unary(UnaryOp::kSin, *this); }
Tensor Tensor::cos() const { return unary(UnaryOp::kCos, *this); }
Tensor Tensor::tan() const { return unary(UnaryOp::kTan, *this); }
Tensor Tensor::tanh() const { return unary(UnaryOp::kTanh, *this); }
Tensor Tensor::sigmoid() const { return unary(UnaryOp::kSigmoid, *this); }
Tensor Tensor::erf() const { return unary(UnaryOp::kErf, *this); }
Tensor Tensor::floor() const { return unary(UnaryOp::kFloor, *this); }
Tensor Tensor::ceil() const { return unary(UnaryOp::kCeil, *this); }
Tensor Tensor::round() const { return unary(UnaryOp::kRound, *this); }
Tensor Tensor::trunc() const { return unary(UnaryOp::kTrunc, *this); }
Tensor Tensor::sign() const { return unary(UnaryOp::kSign, *this); }
Tensor Tensor::logical_not() const { return unary(UnaryOp::kLogicalNot, *this); }
Tensor Tensor::bitwise_not() const { return unary(UnaryOp::kBitwiseNot, *this); }
Tensor Tensor::isnan() const { return unary(UnaryOp::kIsNan, *this); }
Tensor Tensor::isinf() const { return unary(UnaryOp::kIsInf, *this); }

Tensor Tensor::square() const {
  if (dtype() == DType::kBool) build::unsupported_dtype("square", dtype());
  return mul(*this);
}

Tensor Tensor::relu() const {
  if (dtype() == DType::kBool) build::unsupported_dtype("relu", dtype());
  return maximum(Scalar(0));
}

Tensor Tensor::leaky_relu(double negative_slope) const {
  if (!is_float(dtype())) build::unsupported_dtype("leaky_relu", dtype());
  return where(gt(Scalar(0)), *this, mul(negative_slope));
}

Tensor Tensor::gelu(bool tanh_approximation) const {
  if (!is_float(dtype())) build::unsupported_dtype("gelu", dtype());
  return build::in_float32(*this, [&](const Tensor& x) {
    if (tanh_approximation) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const double k = std::sqrt(2.0 / M_PI);
      Tensor inner = x.add(x.mul(x).mul(x).mul(0.044715)).mul(k);
      return x.mul(0.5).mul(inner.tanh().add(1.0));
    }
    return x.mul(0.5).mul(x.mul(M_SQRT1_2).erf().add(1.0));
  });
}

Tensor Tensor::silu() const {
  if (!is_float(dtype())) build::unsupported_dtype("silu", dtype());
  return build::in_float32(*this, [](const Tensor& x) { return x.mul(x.sigmoid()); });
}

Tensor Tensor::softplus(double beta, double threshold) const {
  if (!is_float(dtype())) build::unsupported_dtype("softplus", dtype());
  // log(1 + exp(beta x)) / beta, computed stably as max(bx, 0) + log1p(exp(-|bx|)),
  // and x itself where beta x > threshold (as PyTorch).
  return build::in_float32(*this, [&](const Tensor& x) {
    Tensor bx = x.mul(beta);
    Tensor soft = bx.maximum(Scalar(0)).add(bx.abs().neg().exp().log1p()).div(beta);
    return where(bx.gt(threshold), x, soft);
  });
}

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  if (!min && !max) throw Error("clamp: give a lower bound, an upper bound or both");
  if (dtype() == DType::kBool) build::unsupported_dtype("clamp", dtype());
  Tensor out = *this;
  if (min) out = out.maximum(*min);
  if (max) out = out.minimum(*max);
  return out;
}

#define NVHCQ_BINARY(method, op)                                                                      \
  Tensor Tensor::method(const Tensor& o) const { return binary(BinaryOp::op, *this, o); }               \
  Tensor Tensor::method(const Scalar& s) const { return binary(BinaryOp::op, *this, build::scalar_operand(*this, s)); }

NVHCQ_BINARY(add, kAdd)
NVHCQ_BINARY(sub, kSub)
NVHCQ_BINARY(mul, kMul)
NVHCQ_BINARY(div, kDiv)
NVHCQ_BINARY(pow, kPow)
NVHCQ_BINARY(maximum, kMax)
NVHCQ_BINARY(minimum, kMin)
NVHCQ_BINARY(mod, kMod)
NVHCQ_BINARY(lt, kLt)
NVHCQ_BINARY(le, kLe)
NVHCQ_BINARY(eq, kEq)
NVHCQ_BINARY(ne, kNe)
NVHCQ_BINARY(gt, kGt)
NVHCQ_BINARY(ge, kGe)
NVHCQ_BINARY(bitwise_and, kBitAnd)
NVHCQ_BINARY(bitwise_or, kBitOr)
NVHCQ_BINARY(bitwise_xor, kBitXor)
NVHCQ_BINARY(shl, kShl)
NVHCQ_BINARY(shr, kShr)
#undef NVHCQ_BINARY

Tensor Tensor::logical_and(const Tensor& o) const { return binary(BinaryOp::kLogicalAnd, *this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return binary(BinaryOp::kLogicalOr, *this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return binary(BinaryOp::kLogicalXor, *this, o); }

Tensor Tensor::where(const Tensor& cond, const Tensor& a, const Tensor& b) { return build::where(cond, a, b); }
Tensor Tensor::where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return build::where(cond, a, build::scalar_operand(a, b));
}
Tensor Tensor::where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return build::where(cond, build::scalar_operand(b, a), b);
}

}  // namespace nvhcq::tensor
