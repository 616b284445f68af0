#pragma once
// Tensor dtypes and the promotion rules of binary operations (docs/tensor.md).
// The dtype ids are the CPU kernels' ids (cpu/dtype.h), so every backend shares
// one list.
//
// promote_types(a, b):
//   - equal types: unchanged; bool with anything: the other type;
//   - two integer types: the wider; u8 with a signed type of 8 bits gives i16;
//   - integer with float: the float; f16 with bf16 gives f32; two floats: the wider.
// A Scalar operand is "weak": it takes the tensor's dtype when its kind (bool,
// integer, float) does not rank above the tensor's; an integer or bool tensor with
// a float scalar gives kDefaultFloat (f32); a bool tensor with an integer scalar
// gives i64.

#include <string>

#include "cpu/dtype.h"
#include "tensor/scalar.h"

namespace nvhcq::tensor {

using DType = cpu::DType;
using cpu::dtype_name;
using cpu::dtype_size;
using cpu::is_float;
using cpu::is_int;

inline constexpr DType kDefaultFloat = DType::kF32;
inline constexpr DType kDefaultInt = DType::kI64;

DType promote_types(DType a, DType b);
// The dtype a Scalar takes next to a tensor of dtype `t`.
DType scalar_dtype(DType t, const Scalar& s);
// dtype of a Scalar on its own: bool, i64 or f32.
DType default_dtype(const Scalar& s);
// The float dtype an op on `t` computes in when it needs a float (t itself when
// it is a float, else f32).
inline DType float_dtype(DType t) { return is_float(t) ? t : kDefaultFloat; }
// Parses "f32", "bf16", ...; throws Error naming the valid names otherwise.
DType parse_dtype(const std::string& name);

}  // namespace nvhcq::tensor
