#include "tensor/dtype.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "cpu/element.h"

namespace nvhcq::tensor {

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = is_float(a), fb = is_float(b);
  if (fa && fb) {
    if ((a == DType::kF16 && b == DType::kBF16) || (a == DType::kBF16 && b == DType::kF16)) return DType::kF32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // Two integer types.
  if (a == DType::kU8 || b == DType::kU8) {
    DType other = a == DType::kU8 ? b : a;
    return dtype_size(other) > 1 ? other : DType::kI16;
  }
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

DType scalar_dtype(DType t, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::kBool: return t;
    case Scalar::Kind::kInt: return t == DType::kBool ? kDefaultInt : t;
    case Scalar::Kind::kFloat: return is_float(t) ? t : kDefaultFloat;
  }
  return t;
}

DType default_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::kBool: return DType::kBool;
    case Scalar::Kind::kInt: return kDefaultInt;
    case Scalar::Kind::kFloat: return kDefaultFloat;
  }
  return kDefaultFloat;
}

DType parse_dtype(const std::string& name) {
  DType t;
  if (cpu::parse_dtype(name.c_str(), &t)) return t;
  throw Error("unknown dtype '" + name + "'", {}, 0, "use one of bool u8 i8 i16 i32 i64 f16 bf16 f32 f64");
}

int64_t Scalar::to_int() const {
  if (kind_ != Kind::kFloat) return i_;
  return cpu::saturate_to_int<int64_t>(f_);
}

std::string Scalar::to_string() const {
  if (kind_ == Kind::kBool) return i_ ? "true" : "false";
  if (kind_ == Kind::kInt) return std::to_string(i_);
  std::ostringstream out;
  out << f_;
  return out.str();
}

}  // namespace nvhcq::tensor
