#pragma once
// Index-driven kernels: gather, scatter-add and cumulative sum along one axis.
// Indices may be any integer dtype; an index outside [0, size) throws Error
// naming the index and the axis (the tensor layer does not wrap negatives).

#include <cstdint>

#include "cpu/strided.h"

namespace nvhcq::cpu {

// out[p] = x[p with coordinate `axis` replaced by index[p]] for every position p of
// `shape` (the index's shape). x has x_axis_size elements along `axis` and strides
// for every axis (its other extents must cover `shape`). out is contiguous, x's dtype.
void gather(int ndim, const int64_t* shape, int axis, const StridedOperand& x, int64_t x_axis_size,
            const StridedOperand& index, void* out);

// out (contiguous [out_shape], already holding the input) gets, for every position p
// of `shape` (the index's and src's shape): out[p with axis = index[p]] += src[p].
// Accumulates in the compute type of out_dtype; lines along `axis` are processed in
// order, so the result is deterministic.
void scatter_add(int ndim, const int64_t* shape, int axis, const int64_t* out_shape, void* out, DType out_dtype,
                 const StridedOperand& index, const StridedOperand& src);

// out (contiguous, out_dtype) = inclusive running sum of x along `axis`, accumulated
// in double for floats and int64 for integers and bool.
void cumsum(int ndim, const int64_t* shape, int axis, const StridedOperand& x, void* out, DType out_dtype);

}  // namespace nvhcq::cpu
