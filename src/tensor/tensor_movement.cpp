// Movement ops: views where strides can express them, copies (kCat, kContiguous)
// where they cannot.
#include <numeric>

#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {

Tensor Tensor::reshape(const Shape& new_shape) const {
  Shape s = new_shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw Error("reshape: only one extent may be -1, got " + shape_str(new_shape));
      infer = static_cast<int>(i);
    } else if (s[i] < 0) {
      throw Error("reshape: invalid shape " + shape_str(new_shape));
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0) {
      throw Error("reshape: cannot reshape a tensor of shape " + shape_str(shape()) + " into " + shape_str(new_shape));
    }
    s[infer] = numel() / known;
  }
  if (tensor::numel(s) != numel()) {
    throw Error("reshape: cannot reshape a tensor of shape " + shape_str(shape()) + " (" + std::to_string(numel()) +
                " elements) into " + shape_str(new_shape));
  }
  check_shape(s, "reshape");
  if (s == shape()) return *this;
  return build::view_op(*this, [&](const View& v) { return v.reshape(s); });
}

Tensor Tensor::flatten(int start_axis, int end_axis) const {
  if (ndim() == 0) return reshape({1});
  const int a = normalize_axis(start_axis, ndim(), "flatten"), b = normalize_axis(end_axis, ndim(), "flatten");
  if (a > b) throw Error("flatten: start axis comes after end axis");
  Shape s(shape().begin(), shape().begin() + a);
  int64_t n = 1;
  for (int d = a; d <= b; ++d) n *= shape()[d];
  s.push_back(n);
  s.insert(s.end(), shape().begin() + b + 1, shape().end());
  return reshape(s);
}

Tensor Tensor::permute(const std::vector<int>& order) const {
  if (static_cast<int>(order.size()) != ndim()) {
    throw Error("permute: order has " + std::to_string(order.size()) + " axes, the tensor has " +
                std::to_string(ndim()));
  }
  std::vector<int> norm;
  std::vector<bool> used(order.size(), false);
  for (int a : order) {
    int n = normalize_axis(a, ndim(), "permute");
    if (used[n]) throw Error("permute: axis " + std::to_string(a) + " appears twice");
    used[n] = true;
    norm.push_back(n);
  }
  bool identity = true;
  for (size_t i = 0; i < norm.size(); ++i) identity = identity && norm[i] == static_cast<int>(i);
  if (identity) return *this;
  return build::view_op(*this, [&](const View& v) { return std::optional<View>(v.permute(norm)); });
}

Tensor Tensor::transpose(int a, int b) const {
  if (ndim() == 0) return *this;
  std::vector<int> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[normalize_axis(a, ndim(), "transpose")], order[normalize_axis(b, ndim(), "transpose")]);
  return permute(order);
}

Tensor Tensor::t() const { return ndim() < 2 ? *this : transpose(-2, -1); }

Tensor Tensor::expand(const Shape& new_shape) const {
  if (new_shape.size() < shape().size()) {
    throw Error("expand: target " + shape_str(new_shape) + " has fewer axes than " + shape_str(shape()));
  }
  Shape target = new_shape;
  const size_t lead = new_shape.size() - shape().size();
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (i < lead) throw Error("expand: -1 is not allowed for a new leading axis in " + shape_str(new_shape));
      target[i] = shape()[i - lead];
    }
  }
  return build::broadcast(*this, target);
}

Tensor Tensor::broadcast_to(const Shape& new_shape) const { return expand(new_shape); }

Tensor Tensor::slice(int axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) const {
  const int a = normalize_axis(axis, ndim(), "slice");
  if (step == 0) throw Error("slice: step must not be zero");
  const int64_t n = shape()[a];
  int64_t b, e, count;
  if (step > 0) {
    b = start.value_or(0);
    e = stop.value_or(n);
    if (b < 0) b += n;
    if (e < 0) e += n;
    b = std::clamp<int64_t>(b, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    count = e > b ? (e - b + step - 1) / step : 0;
  } else {
    b = start.value_or(n - 1);
    e = stop.has_value() ? *stop : -1 - n;  // "before index 0"
    if (b < 0) b += n;
    if (e < 0) e += n;
    b = std::clamp<int64_t>(b, -1, n - 1);
    e = std::clamp<int64_t>(e, -1, n - 1);
    count = b > e ? (b - e + (-step) - 1) / (-step) : 0;
  }
  if (b == 0 && step == 1 && count == n) return *this;
  return build::view_op(*this, [&](const View& v) { return std::optional<View>(v.slice(a, b, step, count)); });
}

Tensor Tensor::select(int axis, int64_t index) const {
  const int a = normalize_axis(axis, ndim(), "select");
  const int64_t n = shape()[a];
  const int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n) {
    throw Error("select: index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) +
                " of size " + std::to_string(n));
  }
  return build::squeeze_axes(slice(a, i, i + 1, 1), {a});
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& pads, PadMode mode, const Scalar& value) const {
  if (static_cast<int>(pads.size()) > ndim()) {
    throw Error("pad: " + std::to_string(pads.size()) + " padding pairs for a tensor with " + std::to_string(ndim()) +
                " axes");
  }
  Tensor out = *this;
  for (int a = 0; a < static_cast<int>(pads.size()); ++a) {
    auto [before, after] = pads[a];
    if (before == 0 && after == 0) continue;
    const int64_t n = out.shape()[a];
    if (mode == PadMode::kReflect) {
      if (before < 0 || after < 0 || before >= n || after >= n) {
        throw Error("pad: reflect padding (" + std::to_string(before) + ", " + std::to_string(after) +
                    ") must be non-negative and below the extent " + std::to_string(n) + " of axis " +
                    std::to_string(a));
      }
      std::vector<Tensor> parts;
      if (before > 0) parts.push_back(out.slice(a, 1, before + 1).flip({a}));
      parts.push_back(out);
      if (after > 0) parts.push_back(out.slice(a, n - 1 - after, n - 1).flip({a}));
      out = cat(parts, a);
      continue;
    }
    // Negative amounts crop.
    if (before < 0 || after < 0) {
      const int64_t crop_b = before < 0 ? -before : 0, crop_a = after < 0 ? -after : 0;
      if (crop_b + crop_a > n) throw Error("pad: cropping more than the extent of axis " + std::to_string(a));
      out = out.slice(a, crop_b, n - crop_a);
      before = std::max<int64_t>(before, 0);
      after = std::max<int64_t>(after, 0);
    }
    if (before == 0 && after == 0) continue;
    Scalar fill = value;
    out = build::view_op(out, [&](const View& v) { return v.pad(a, before, after, fill); });
  }
  return out;
}

Tensor Tensor::flip(const std::vector<int>& axes) const {
  auto ax = normalize_axes(axes, ndim(), "flip");
  if (axes.empty()) return *this;
  return build::view_op(*this, [&](const View& v) {
    View out = v;
    for (int a : ax) out = out.flip(a);
    return std::optional<View>(out);
  });
}

Tensor Tensor::squeeze(std::optional<int> axis) const {
  std::vector<int> axes;
  if (axis) {
    int a = normalize_axis(*axis, std::max(ndim(), 1), "squeeze");
    if (ndim() > 0 && shape()[a] == 1) axes.push_back(a);
  } else {
    for (int d = 0; d < ndim(); ++d)
      if (shape()[d] == 1) axes.push_back(d);
  }
  return build::squeeze_axes(*this, axes);
}

Tensor Tensor::unsqueeze(int axis) const {
  const int a = normalize_axis(axis, ndim() + 1, "unsqueeze");
  Shape s = shape();
  s.insert(s.begin() + a, 1);
  return reshape(s);
}

Tensor Tensor::repeat(const std::vector<int64_t>& repeats) const {
  if (static_cast<int>(repeats.size()) < ndim()) {
    throw Error("repeat: " + std::to_string(repeats.size()) + " repeat counts for a tensor with " +
                std::to_string(ndim()) + " axes");
  }
  for (int64_t r : repeats)
    if (r < 0) throw Error("repeat: counts must be >= 0");
  Shape base(repeats.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  Shape interleaved, expanded, result;
  for (size_t i = 0; i < repeats.size(); ++i) {
    interleaved.push_back(1);
    interleaved.push_back(base[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(base[i]);
    result.push_back(repeats[i] * base[i]);
  }
  return reshape(interleaved).expand(expanded).reshape(result);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int axis) {
  if (tensors.empty()) throw Error("cat: no tensors given");
  const Tensor& first = tensors[0];
  build::require_defined("cat", first, "a tensor");
  if (first.ndim() == 0) throw Error("cat: 0-d tensors cannot be concatenated; use stack");
  const int a = normalize_axis(axis, first.ndim(), "cat");
  DType t = first.dtype();
  int64_t total = 0;
  for (const Tensor& x : tensors) {
    build::require_defined("cat", x, "a tensor");
    if (x.device() != first.device()) throw Error("cat: tensors are on different devices");
    bool ok = x.ndim() == first.ndim();
    for (int d = 0; ok && d < x.ndim(); ++d) ok = d == a || x.shape()[d] == first.shape()[d];
    if (!ok) {
      throw Error("cat: shapes " + shape_str(first.shape()) + " and " + shape_str(x.shape()) +
                  " differ outside axis " + std::to_string(a));
    }
    t = promote_types(t, x.dtype());
    total += x.shape()[a];
  }
  if (tensors.size() == 1) return first.cast(t);
  Shape s = first.shape();
  s[a] = total;
  std::vector<NodePtr> src;
  for (const Tensor& x : tensors) src.push_back(x.cast(t).node());
  Tensor out = build::make(Op::kCat, t, s, first.device(), std::move(src));
  out.node()->axis = a;
  return out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int axis) {
  if (tensors.empty()) throw Error("stack: no tensors given");
  const int a = normalize_axis(axis, tensors[0].ndim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& x : tensors) {
    if (x.shape() != tensors[0].shape()) {
      throw Error("stack: shapes " + shape_str(tensors[0].shape()) + " and " + shape_str(x.shape()) + " differ");
    }
    parts.push_back(x.unsqueeze(a));
  }
  return cat(parts, a);
}

std::vector<Tensor> Tensor::split(int64_t size, int axis) const {
  if (size <= 0) throw Error("split: size must be positive, got " + std::to_string(size));
  const int a = normalize_axis(axis, ndim(), "split");
  const int64_t n = shape()[a];
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += size) sizes.push_back(std::min(size, n - at));
  if (sizes.empty()) sizes.push_back(0);
  return split(sizes, a);
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int axis) const {
  const int a = normalize_axis(axis, ndim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw Error("split: sizes must be >= 0");
    total += s;
  }
  if (total != shape()[a]) {
    throw Error("split: sizes add up to " + std::to_string(total) + ", axis " + std::to_string(a) + " has " +
                std::to_string(shape()[a]));
  }
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(a, at, at + s));
    at += s;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int axis) const {
  if (chunks <= 0) throw Error("chunk: the number of chunks must be positive");
  const int a = normalize_axis(axis, ndim(), "chunk");
  const int64_t n = shape()[a];
  return split(std::max<int64_t>(1, (n + chunks - 1) / chunks), a);
}

namespace {

// diagonal-relative mask over the last two axes: col - row (>= k for triu, <= k for tril).
Tensor triangle(const Tensor& x, int64_t k, bool upper) {
  if (x.ndim() < 2) throw Error(std::string(upper ? "triu" : "tril") + ": needs at least 2 axes, got shape " + shape_str(x.shape()));
  const int64_t r = x.shape()[x.ndim() - 2], c = x.shape()[x.ndim() - 1];
  Tensor rows = Tensor::arange(r, DType::kI64, x.device()).reshape({r, 1});
  Tensor cols = Tensor::arange(c, DType::kI64, x.device()).reshape({1, c});
  Tensor diff = cols.sub(rows);
  Tensor mask = upper ? diff.ge(k) : diff.le(k);
  return Tensor::where(mask, x, build::constant(Scalar(0), x.dtype(), {}, x.device()));
}

}  // namespace

Tensor Tensor::triu(int64_t diagonal) const { return triangle(*this, diagonal, true); }
Tensor Tensor::tril(int64_t diagonal) const { return triangle(*this, diagonal, false); }

}  // namespace nvhcq::tensor
