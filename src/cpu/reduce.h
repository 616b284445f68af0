#pragma once
// Reductions over any set of axes of a strided operand.
//  - sum and prod of floats accumulate in double, of integers and bool in int64
//    (wrapping); the result is converted to the output dtype once.
//  - max and min propagate NaN; they need at least one element.
//  - argmax/argmin reduce exactly one axis and write int64 indices: the first
//    position of the extreme value (a NaN counts as the extreme).
// Results are deterministic: partial sums are split at fixed positions, not by
// thread count.

#include <cstdint>

#include "cpu/strided.h"

namespace nvhcq::cpu {

enum class ReduceOp : uint8_t { kSum, kProd, kMax, kMin, kArgMax, kArgMin };
const char* op_name(ReduceOp op);

// `in` spans `shape` (not masked). `out` is contiguous over the kept axes in order
// (equivalently: over `shape` with the reduced axes set to 1).
void reduce(ReduceOp op, int ndim, const int64_t* shape, const bool* reduced_axes, const StridedOperand& in,
            void* out, DType out_dtype);

}  // namespace nvhcq::cpu
