#pragma once
// Element types the CPU kernels read and write. The tensor layer uses these ids
// as its dtypes (tensor::DType is this enum), so every backend and the CPU
// reference agree on one list. Kernels are written against raw pointers plus one
// of these ids.

#include <cstddef>
#include <cstdint>

namespace nvhcq::cpu {

enum class DType : uint8_t { kBool, kU8, kI8, kI16, kI32, kI64, kF16, kBF16, kF32, kF64 };
inline constexpr int kNumDTypes = 10;

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::kBool: case DType::kU8: case DType::kI8: return 1;
    case DType::kI16: case DType::kF16: case DType::kBF16: return 2;
    case DType::kI32: case DType::kF32: return 4;
    case DType::kI64: case DType::kF64: return 8;
  }
  return 0;
}

constexpr bool is_float(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}
// Integer types, bool excluded.
constexpr bool is_int(DType t) {
  return t == DType::kU8 || t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64;
}
constexpr bool is_signed(DType t) { return is_float(t) || (is_int(t) && t != DType::kU8); }

// Bits of an integer type (bool counts as 1).
constexpr int int_bits(DType t) { return t == DType::kBool ? 1 : static_cast<int>(dtype_size(t) * 8); }

// "f32", "bf16", "i64", "bool", ...
const char* dtype_name(DType t);
// Parses a name written by dtype_name; returns false when unknown.
bool parse_dtype(const char* name, DType* out);

// What kernels compute in: f64 for f64, f32 for the other floats, i64 for integers
// and bool. Elementwise and library kernels load into this type, compute, and
// store back to the output type.
constexpr DType compute_type(DType t) {
  if (t == DType::kF64) return DType::kF64;
  if (is_float(t)) return DType::kF32;
  return DType::kI64;
}

}  // namespace nvhcq::cpu
