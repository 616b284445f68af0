#include "tensor/gpu/scalar_code.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "cpu/element.h"

namespace nvhcq::tensor::codegen {
namespace {

bool float_kind(DType t) {
  if (t == DType::kF64) throw Error("dtype f64 is not supported by the GPU backends");
  return is_float(t);
}

std::string call(const char* fn, const std::string& a) {
  return std::string(fn) + "(" + a + ")";
}
std::string call(const char* fn, const std::string& a, const std::string& b) {
  return std::string(fn) + "(" + a + ", " + b + ")";
}
std::string infix(const std::string& a, const char* op, const std::string& b) {
  return "((" + a + ") " + op + " (" + b + "))";
}
std::string as_bool(const std::string& cond) {
  return "((long long)(" + cond + "))";
}

[[noreturn]] void unsupported(const char* op, DType t) {
  throw Error(std::string("op ") + op + " is not supported for dtype " + dtype_name(t) +
              " on the GPU backends");
}

std::string int_literal(int64_t v) {
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return "(" + std::to_string(v) + "LL)";
}

}  // namespace

const char* compute_ctype(DType t) {
  return float_kind(t) ? "float" : "long long";
}

const char* storage_ctype(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kU8:
      return "unsigned char";
    case DType::kI8:
      return "signed char";
    case DType::kI16:
      return "short";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return "long long";
    case DType::kF16:
    case DType::kBF16:
      return "unsigned short";
    case DType::kF32:
      return "float";
    case DType::kF64:
      break;
  }
  throw Error("dtype f64 is not supported by the GPU backends");
}

std::string load_expr(DType t, const std::string& s) {
  switch (t) {
    case DType::kBool:
      return as_bool("(" + s + ") != 0");
    case DType::kU8:
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
      return "((long long)(" + s + "))";
    case DType::kI64:
      return "(" + s + ")";
    case DType::kF16:
      return call("nvt_h2f", s);
    case DType::kBF16:
      return call("nvt_bf2f", s);
    case DType::kF32:
      return "(" + s + ")";
    case DType::kF64:
      break;
  }
  throw Error("dtype f64 is not supported by the GPU backends");
}

std::string store_expr(DType t, const std::string& c) {
  switch (t) {
    case DType::kBool:
      return "((unsigned char)((" + c + ") != 0))";
    case DType::kU8:
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
      return std::string("((") + storage_ctype(t) + ")(" + c + "))";
    case DType::kF16:
      return call("nvt_f2h", c);
    case DType::kBF16:
      return call("nvt_f2bf", c);
    case DType::kF32:
      return "(" + c + ")";
    case DType::kF64:
      break;
  }
  throw Error("dtype f64 is not supported by the GPU backends");
}

std::string store_double_expr(DType t, const std::string& d) {
  switch (t) {
    case DType::kF32:
      return "((float)(" + d + "))";
    case DType::kF16:
      return "nvt_f2h(nvt_double_to_float_odd(" + d + "))";
    case DType::kBF16:
      return "nvt_f2bf(nvt_double_to_float_odd(" + d + "))";
    default:
      break;
  }
  throw Error(std::string("internal: no double store for dtype ") + dtype_name(t));
}

std::string round_expr(DType t, const std::string& c) {
  switch (t) {
    case DType::kBool:
      return as_bool("(" + c + ") != 0");
    case DType::kU8:
      return call("nvt_wrap_u8", c);
    case DType::kI8:
      return call("nvt_wrap_i8", c);
    case DType::kI16:
      return call("nvt_wrap_i16", c);
    case DType::kI32:
      return call("nvt_wrap_i32", c);
    case DType::kI64:
    case DType::kF32:
      return c;
    case DType::kF16:
      return "nvt_h2f(nvt_f2h(" + c + "))";
    case DType::kBF16:
      return "nvt_bf2f(nvt_f2bf(" + c + "))";
    case DType::kF64:
      break;
  }
  throw Error("dtype f64 is not supported by the GPU backends");
}

std::string cast_expr(DType from, DType to, const std::string& c) {
  if (from == to) return c;
  const bool ff = float_kind(from), tf = float_kind(to);
  if (ff) {
    if (tf) return round_expr(to, c);  // f32 exactly holds f16/bf16; narrowing rounds once
    if (to == DType::kBool) return as_bool("(" + c + ") != 0.0f");  // NaN is true
    const std::string d = "(double)(" + c + ")";
    switch (to) {
      case DType::kU8:
        return call("nvt_f2u8", d);
      case DType::kI8:
        return call("nvt_f2i8", d);
      case DType::kI16:
        return call("nvt_f2i16", d);
      case DType::kI32:
        return call("nvt_f2i32", d);
      default:
        return call("nvt_f2i64", d);
    }
  }
  switch (to) {
    case DType::kF32:
      return call("nvt_i2f", c);
    case DType::kF16:
      return "nvt_h2f(nvt_i2h(" + c + "))";
    case DType::kBF16:
      return "nvt_bf2f(nvt_i2bf(" + c + "))";
    default:
      return round_expr(to, c);
  }
}

std::string float_literal(double v) {
  if (std::isnan(v)) return "nvt_bits_float(0x7fc00000u)";
  if (std::isinf(v)) return v > 0 ? "NVT_INF" : "(-NVT_INF)";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%af", static_cast<double>(static_cast<float>(v)));
  return std::string("(") + buf + ")";
}

std::string literal(DType t, const Scalar& value) {
  // The value the CPU backend would store into a buffer of dtype t.
  uint8_t storage[8] = {0};
  if (value.is_float())
    cpu::write_from_double(storage, t, 0, value.to_double());
  else
    cpu::write_from_int64(storage, t, 0, value.to_int());
  if (float_kind(t)) return float_literal(cpu::read_as_double(storage, t, 0));
  return int_literal(cpu::read_as_int64(storage, t, 0));
}

std::string unary_expr(UnaryOp op, DType t, const std::string& a) {
  const char* name = cpu::op_name(op);
  if (float_kind(t)) {
    switch (op) {
      case UnaryOp::kNeg:
        return "(-(" + a + "))";
      case UnaryOp::kAbs:
        return call("fabsf", a);
      case UnaryOp::kExp:
        return call("expf", a);
      case UnaryOp::kExp2:
        return call("exp2f", a);
      case UnaryOp::kLog:
        return call("logf", a);
      case UnaryOp::kLog2:
        return call("log2f", a);
      case UnaryOp::kSqrt:
        return call("sqrtf", a);
      case UnaryOp::kRsqrt:
        return call("nvt_rsqrt", a);
      case UnaryOp::kReciprocal:
        return "(1.0f / (" + a + "))";
      case UnaryOp::kSin:
        return call("sinf", a);
      case UnaryOp::kCos:
        return call("cosf", a);
      case UnaryOp::kTan:
        return call("tanf", a);
      case UnaryOp::kTanh:
        return call("tanhf", a);
      case UnaryOp::kSigmoid:
        return call("nvt_sigmoid", a);
      case UnaryOp::kErf:
        return call("erff", a);
      case UnaryOp::kLog1p:
        return call("log1pf", a);
      case UnaryOp::kExpm1:
        return call("expm1f", a);
      case UnaryOp::kFloor:
        return call("floorf", a);
      case UnaryOp::kCeil:
        return call("ceilf", a);
      case UnaryOp::kRound:
        return call("rintf", a);  // ties to even
      case UnaryOp::kTrunc:
        return call("truncf", a);
      case UnaryOp::kSign:
        return call("nvt_sign", a);
      case UnaryOp::kLogicalNot:
        return as_bool("(" + a + ") == 0.0f");
      case UnaryOp::kIsNan:
        return as_bool("(" + a + ") != (" + a + ")");
      case UnaryOp::kIsInf:
        return as_bool(call("nvt_isinf", a));
      case UnaryOp::kBitwiseNot:
        break;
    }
    unsupported(name, t);
  }
  switch (op) {
    case UnaryOp::kNeg:
      return call("nvt_neg", a);
    case UnaryOp::kAbs:
      return call("nvt_abs", a);
    case UnaryOp::kSign:
      return call("nvt_sign", a);
    case UnaryOp::kLogicalNot:
      return as_bool("(" + a + ") == 0");
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
    case UnaryOp::kTrunc:
      return a;
    case UnaryOp::kIsNan:
    case UnaryOp::kIsInf:
      return "0LL";
    case UnaryOp::kBitwiseNot:
      return t == DType::kBool ? as_bool("(" + a + ") == 0") : "(~(" + a + "))";
    default:
      break;
  }
  unsupported(name, t);
}

namespace {

// The binary ops spelled alike for every type: max/min/mod, comparisons, and
// the logical ones (which test each side against the type's `zero`). Empty for
// the others.
std::string binary_expr_any_type(BinaryOp op, const std::string& a, const std::string& b,
                                 const char* zero) {
  const std::string za = "(" + a + ") != " + zero, zb = "(" + b + ") != " + zero;
  switch (op) {
    case BinaryOp::kMax:
      return call("nvt_max", a, b);
    case BinaryOp::kMin:
      return call("nvt_min", a, b);
    case BinaryOp::kMod:
      return call("nvt_mod", a, b);
    case BinaryOp::kLt:
      return as_bool(infix(a, "<", b));
    case BinaryOp::kLe:
      return as_bool(infix(a, "<=", b));
    case BinaryOp::kEq:
      return as_bool(infix(a, "==", b));
    case BinaryOp::kNe:
      return as_bool(infix(a, "!=", b));
    case BinaryOp::kGt:
      return as_bool(infix(a, ">", b));
    case BinaryOp::kGe:
      return as_bool(infix(a, ">=", b));
    case BinaryOp::kLogicalAnd:
      return as_bool("(" + za + ") && (" + zb + ")");
    case BinaryOp::kLogicalOr:
      return as_bool("(" + za + ") || (" + zb + ")");
    case BinaryOp::kLogicalXor:
      return as_bool("(" + za + ") != (" + zb + ")");
    default:
      return "";
  }
}

}  // namespace

std::string binary_expr(BinaryOp op, DType t, const std::string& a, const std::string& b) {
  const char* name = cpu::op_name(op);
  const bool f = float_kind(t);
  if (std::string e = binary_expr_any_type(op, a, b, f ? "0.0f" : "0"); !e.empty()) return e;
  if (f) {
    switch (op) {
      case BinaryOp::kAdd:
        return infix(a, "+", b);
      case BinaryOp::kSub:
        return infix(a, "-", b);
      case BinaryOp::kMul:
        return infix(a, "*", b);
      case BinaryOp::kDiv:
        return infix(a, "/", b);
      case BinaryOp::kPow:
        return call("powf", a, b);
      default:
        break;
    }
    unsupported(name, t);
  }
  switch (op) {
    case BinaryOp::kAdd:
      return call("nvt_add", a, b);
    case BinaryOp::kSub:
      return call("nvt_sub", a, b);
    case BinaryOp::kMul:
      return call("nvt_mul", a, b);
    case BinaryOp::kPow:
      return call("nvt_pow", a, b);
    case BinaryOp::kBitAnd:
      return infix(a, "&", b);
    case BinaryOp::kBitOr:
      return infix(a, "|", b);
    case BinaryOp::kBitXor:
      return infix(a, "^", b);
    case BinaryOp::kShl:
      return call("nvt_shl", a, b);
    case BinaryOp::kShr:
      return call("nvt_shr", a, b);
    default:
      break;
  }
  unsupported(name, t);
}

std::string reduce_identity(ReduceOp op, DType t) {
  const bool f = float_kind(t);
  switch (op) {
    case ReduceOp::kSum:
      return f ? "0.0f" : "0LL";
    case ReduceOp::kProd:
      return f ? "1.0f" : "1LL";
    case ReduceOp::kMax:
    case ReduceOp::kArgMax:
      return f ? "(-NVT_INF)" : int_literal(INT64_MIN);
    case ReduceOp::kMin:
    case ReduceOp::kArgMin:
      return f ? "NVT_INF" : int_literal(INT64_MAX);
  }
  return "0";
}

std::string reduce_combine(ReduceOp op, DType t, const std::string& acc, const std::string& v) {
  const bool f = float_kind(t);
  switch (op) {
    case ReduceOp::kSum:
      return f ? infix(acc, "+", v) : call("nvt_add", acc, v);
    case ReduceOp::kProd:
      return f ? infix(acc, "*", v) : call("nvt_mul", acc, v);
    case ReduceOp::kMax:
      return call("nvt_max", acc, v);
    case ReduceOp::kMin:
      return call("nvt_min", acc, v);
    default:
      break;
  }
  throw Error(std::string("internal: no combine step for ") + cpu::op_name(op));
}

}  // namespace nvhcq::tensor::codegen
