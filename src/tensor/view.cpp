#include "tensor/view.h"

#include <algorithm>

namespace nvhcq::tensor {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace

View View::contiguous(const Shape& shape) {
  View v;
  v.shape = shape;
  v.strides = contiguous_strides(shape);
  return v;
}

bool View::is_identity(const Shape& base_shape) const {
  return !masked() && offset == 0 && shape == base_shape && is_contiguous();
}

bool View::is_contiguous() const {
  if (masked()) return false;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

void View::drop_trivial_mask() {
  if (!masked()) return;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (valid[d].first > 0 || valid[d].second < shape[d]) return;
  }
  valid.clear();
}

std::optional<View> View::reshape(const Shape& new_shape) const {
  View out;
  out.shape = new_shape;
  out.offset = offset;
  out.pad_value = pad_value;
  if (numel(shape) == 0) {  // nothing to address
    out.strides = contiguous_strides(new_shape);
    return out;
  }
  if (masked()) {
    // Only inserting or removing axes of extent 1 keeps a mask meaningful.
    std::vector<size_t> old_axes, new_axes;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1) old_axes.push_back(d);
    for (size_t d = 0; d < new_shape.size(); ++d)
      if (new_shape[d] != 1) new_axes.push_back(d);
    if (old_axes.size() != new_axes.size()) return std::nullopt;
    for (size_t i = 0; i < old_axes.size(); ++i)
      if (shape[old_axes[i]] != new_shape[new_axes[i]]) return std::nullopt;
    // A dropped size-1 axis whose index 0 is masked makes everything padding.
    bool all_pad = false;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 1 && !(valid[d].first <= 0 && 0 < valid[d].second)) all_pad = true;
    out.strides.assign(new_shape.size(), 0);
    out.valid.assign(new_shape.size(), {0, 1});
    for (size_t i = 0; i < old_axes.size(); ++i) {
      out.strides[new_axes[i]] = strides[old_axes[i]];
      out.valid[new_axes[i]] = valid[old_axes[i]];
    }
    if (all_pad && !new_shape.empty()) out.valid[0] = {0, 0};
    if (all_pad && new_shape.empty()) return std::nullopt;
    out.drop_trivial_mask();
    return out;
  }
  // Unmasked: split the old axes (size-1 axes dropped) into runs that are
  // contiguous in memory, and map each group of new axes onto one run.
  Shape os;
  Strides ost;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) {
      os.push_back(shape[d]);
      ost.push_back(strides[d]);
    }
  }
  out.strides.assign(new_shape.size(), 0);
  size_t oi = 0, ni = 0;
  const size_t on = os.size(), nn = new_shape.size();
  while (oi < on || ni < nn) {
    if (ni < nn && new_shape[ni] == 1) {  // any stride works
      out.strides[ni] = 0;
      ++ni;
      continue;
    }
    if (oi >= on || ni >= nn) return std::nullopt;
    // Grow groups [oi, oj) and [ni, nj) until their products match.
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = os[oi], np = new_shape[ni];
    while (op != np) {
      if (op < np) {
        if (oj >= on) return std::nullopt;
        op *= os[oj++];
      } else {
        if (nj >= nn) return std::nullopt;
        np *= new_shape[nj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (ost[k] != ost[k + 1] * os[k + 1]) return std::nullopt;
    }
    int64_t st = ost[oj - 1];
    for (size_t k = nj; k-- > ni;) {
      out.strides[k] = st;
      st *= new_shape[k];
    }
    oi = oj;
    ni = nj;
  }
  return out;
}

View View::permute(const std::vector<int>& order) const {
  View out;
  out.offset = offset;
  out.pad_value = pad_value;
  for (int a : order) {
    out.shape.push_back(shape[a]);
    out.strides.push_back(strides[a]);
    if (masked()) out.valid.push_back(valid[a]);
  }
  return out;
}

View View::expand(const Shape& new_shape) const {
  View out = *this;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == new_shape[d]) continue;
    out.shape[d] = new_shape[d];
    out.strides[d] = 0;
    if (masked()) {
      bool ok = valid[d].first <= 0 && 0 < valid[d].second;
      out.valid[d] = ok ? std::pair<int64_t, int64_t>{0, new_shape[d]} : std::pair<int64_t, int64_t>{0, 0};
    }
  }
  out.drop_trivial_mask();
  return out;
}

View View::slice(int axis, int64_t start, int64_t step, int64_t count) const {
  View out = *this;
  out.shape[axis] = count;
  if (count > 0) out.offset += start * strides[axis];
  out.strides[axis] = strides[axis] * step;
  if (masked()) {
    auto [lo, hi] = valid[axis];
    int64_t nlo, nhi;
    if (step > 0) {
      nlo = ceil_div(lo - start, step);
      nhi = ceil_div(hi - start, step);
    } else {
      const int64_t s = -step;
      nlo = floor_div(start - hi, s) + 1;
      nhi = floor_div(start - lo, s) + 1;
    }
    nlo = std::clamp<int64_t>(nlo, 0, count);
    nhi = std::clamp<int64_t>(nhi, 0, count);
    out.valid[axis] = {nlo, std::max(nlo, nhi)};
    out.drop_trivial_mask();
  }
  return out;
}

View View::flip(int axis) const {
  const int64_t n = shape[axis];
  if (n == 0) return *this;
  return slice(axis, n - 1, -1, n);
}

std::optional<View> View::pad(int axis, int64_t before, int64_t after, const Scalar& value) const {
  if (before == 0 && after == 0) return *this;
  if (masked() && !(pad_value == value)) return std::nullopt;
  View out = *this;
  if (!out.masked()) {
    for (int64_t d : shape) out.valid.push_back({0, d});
  }
  out.shape[axis] += before + after;
  out.offset -= before * strides[axis];
  out.valid[axis] = {valid.empty() ? before : valid[axis].first + before,
                     valid.empty() ? before + shape[axis] : valid[axis].second + before};
  out.pad_value = value;
  out.drop_trivial_mask();
  return out;
}

}  // namespace nvhcq::tensor
