#include "tensor/shape.h"

#include <algorithm>

#include "base/error.h"

namespace nvhcq::tensor {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t st = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = st;
    st *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

std::string shape_str(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

void check_shape(const Shape& shape, const char* what) {
  if (static_cast<int>(shape.size()) > kMaxRank) {
    throw Error(std::string(what) + ": shape " + shape_str(shape) + " has more than " + std::to_string(kMaxRank) +
                " axes");
  }
  for (int64_t d : shape) {
    if (d < 0) throw Error(std::string(what) + ": shape " + shape_str(shape) + " has a negative extent");
  }
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int axis, int ndim, const char* op) {
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for a tensor with " +
                std::to_string(ndim) + " axes");
  }
  return a;
}

std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* op) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) out.push_back(normalize_axis(a, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw Error(std::string(op) + ": an axis is listed twice");
  }
  return out;
}

}  // namespace nvhcq::tensor
