#pragma once
// View: how a movement op sees the contiguous output of another node, without
// copying. Element i (a multi-index over `shape`) of the view is
//   valid(i) ? base[offset + sum(i[d] * strides[d])] : pad_value
// where valid(i) holds when valid[d].first <= i[d] < valid[d].second for every
// axis (an empty `valid` means every index is valid). Reshape, permute, expand,
// slice with steps (negative too), flip and constant pad all compose into one
// View; a reshape that strides cannot express returns nullopt and the caller
// materializes first. This is the form a GPU code generator folds into index
// arithmetic.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tensor/scalar.h"
#include "tensor/shape.h"

namespace nvhcq::tensor {

struct View {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
  std::vector<std::pair<int64_t, int64_t>> valid;  // per axis [lo, hi), or empty
  Scalar pad_value = Scalar(0);

  static View contiguous(const Shape& shape);

  bool masked() const { return !valid.empty(); }
  // True when this view reads a base of `base_shape` as is (no copy needed).
  bool is_identity(const Shape& base_shape) const;
  // True when elements are laid out row-major and dense (offset may be nonzero).
  bool is_contiguous() const;

  std::optional<View> reshape(const Shape& new_shape) const;
  View permute(const std::vector<int>& order) const;
  // new_shape has the same rank; axes of extent 1 may grow (stride 0).
  View expand(const Shape& new_shape) const;
  // Python slice semantics after normalization: start in range, step != 0, count >= 0.
  View slice(int axis, int64_t start, int64_t step, int64_t count) const;
  View flip(int axis) const;
  // Grows axis by `before`/`after` (both >= 0) elements reading as `value`;
  // nullopt when existing padding has a different value.
  std::optional<View> pad(int axis, int64_t before, int64_t after, const Scalar& value) const;

 private:
  void drop_trivial_mask();
};

}  // namespace nvhcq::tensor
