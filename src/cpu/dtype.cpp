#include "cpu/dtype.h"

#include <cstring>

namespace nvhcq::cpu {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kU8: return "u8";
    case DType::kI8: return "i8";
    case DType::kI16: return "i16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
  }
  return "?";
}

bool parse_dtype(const char* name, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    if (std::strcmp(name, dtype_name(t)) == 0) {
      *out = t;
      return true;
    }
  }
  return false;
}

}  // namespace nvhcq::cpu
