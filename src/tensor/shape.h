#pragma once
// Shapes and axes: a Shape is a list of extents (an empty list is a 0-d scalar).
// Helpers here validate user input and throw nvhcq::Error with the offending
// shapes or axis in the message.

#include <cstdint>
#include <string>
#include <vector>

namespace nvhcq::tensor {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// Tensors have at most this many axes (the CPU kernels' limit).
inline constexpr int kMaxRank = 16;

int64_t numel(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"

// Throws unless every extent is >= 0 and the rank is at most kMaxRank.
void check_shape(const Shape& shape, const char* what);
// NumPy broadcasting of two shapes; throws naming both shapes on mismatch.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Maps a possibly negative axis into [0, ndim); throws for an out-of-range axis.
int normalize_axis(int axis, int ndim, const char* op);
// Normalizes a list of axes (negative allowed, duplicates rejected); an empty list
// means every axis. Returns a sorted list.
std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* op);

}  // namespace nvhcq::tensor
