#pragma once
// StridedOperand: how a kernel sees one tensor argument: a base pointer, an element
// type, an element offset and per-axis strides (in elements, possibly zero for
// broadcast or negative for flips). An operand may carry per-axis valid ranges
// [lo, hi): an element whose index falls outside any range reads as the pad value
// (this is how padded views are read without materializing them).

#include <cstdint>

#include "cpu/dtype.h"

namespace nvhcq::cpu {

inline constexpr int kMaxDims = 16;

struct StridedOperand {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t offset = 0;
  const int64_t* strides = nullptr;   // ndim entries
  const int64_t* valid_lo = nullptr;  // ndim entries, or null: every index valid
  const int64_t* valid_hi = nullptr;
  double pad_float = 0.0;  // read where masked, by float kernels
  int64_t pad_int = 0;     // read where masked, by integer kernels

  bool masked() const { return valid_lo != nullptr; }
};

}  // namespace nvhcq::cpu
