#pragma once
// The float64 reference the op suite checks against: a minimal dense array type
// and naive implementations of every op, written here from the ops' definitions,
// independently of src/tensor and src/cpu. Header-only so the shared *_cases.cpp
// files link into every test binary.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

namespace nvhcq::ref {

using Shape = std::vector<int64_t>;

inline int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Ref {
  Shape shape;
  std::vector<double> v;

  Ref() = default;
  Ref(Shape s, std::vector<double> values) : shape(std::move(s)), v(std::move(values)) {}
  static Ref filled(const Shape& s, double value) { return Ref(s, std::vector<double>(count(s), value)); }
  int ndim() const { return static_cast<int>(shape.size()); }
  int64_t numel() const { return count(shape); }

  // Multi-index <-> flat (row-major).
  std::vector<int64_t> index_of(int64_t flat) const {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
    return idx;
  }
  int64_t flat_of(const std::vector<int64_t>& idx) const {
    int64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
  }
  double at(const std::vector<int64_t>& idx) const { return v[flat_of(idx)]; }
  double& at(const std::vector<int64_t>& idx) { return v[flat_of(idx)]; }
};

inline int norm_axis(int a, int n) { return a < 0 ? a + n : a; }

// ---- elementwise -------------------------------------------------------------

inline Ref map(const Ref& a, const std::function<double(double)>& f) {
  Ref out = a;
  for (double& x : out.v) x = f(x);
  return out;
}

inline Shape broadcast_shape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Element of `a` seen through broadcasting to `out_shape` at multi-index idx.
inline double broadcast_at(const Ref& a, const Shape& out_shape, const std::vector<int64_t>& idx) {
  const size_t lead = out_shape.size() - a.shape.size();
  int64_t f = 0;
  for (size_t d = 0; d < a.shape.size(); ++d) f = f * a.shape[d] + (a.shape[d] == 1 ? 0 : idx[d + lead]);
  return a.v[f];
}

inline Ref zip(const Ref& a, const Ref& b, const std::function<double(double, double)>& f) {
  Ref out = Ref::filled(broadcast_shape(a.shape, b.shape), 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto idx = out.index_of(i);
    out.v[i] = f(broadcast_at(a, out.shape, idx), broadcast_at(b, out.shape, idx));
  }
  return out;
}

inline Ref where(const Ref& c, const Ref& a, const Ref& b) {
  Ref out = Ref::filled(broadcast_shape(broadcast_shape(c.shape, a.shape), b.shape), 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto idx = out.index_of(i);
    out.v[i] = broadcast_at(c, out.shape, idx) != 0 ? broadcast_at(a, out.shape, idx) : broadcast_at(b, out.shape, idx);
  }
  return out;
}

// ---- reductions --------------------------------------------------------------

inline std::vector<int> norm_axes(std::vector<int> axes, int n) {
  if (axes.empty()) {
    for (int i = 0; i < n; ++i) axes.push_back(i);
  }
  for (int& a : axes) a = norm_axis(a, n);
  std::sort(axes.begin(), axes.end());
  return axes;
}

// Folds every group of elements that share the kept coordinates, in index order.
inline Ref reduce(const Ref& a, std::vector<int> axes, bool keepdim,
                  const std::function<double(const std::vector<double>&)>& fold) {
  axes = norm_axes(axes, a.ndim());
  Shape kept = a.shape;
  for (int ax : axes) kept[ax] = 1;
  std::vector<std::vector<double>> groups(count(kept));
  Ref k = Ref::filled(kept, 0);
  for (int64_t i = 0; i < a.numel(); ++i) {
    auto idx = a.index_of(i);
    for (int ax : axes) idx[ax] = 0;
    groups[k.flat_of(idx)].push_back(a.v[i]);
  }
  for (size_t g = 0; g < groups.size(); ++g) k.v[g] = fold(groups[g]);
  if (keepdim) return k;
  Shape s;
  for (int d = 0; d < a.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) s.push_back(a.shape[d]);
  k.shape = s;
  return k;
}

inline double fsum(const std::vector<double>& g) { return std::accumulate(g.begin(), g.end(), 0.0); }
inline double fprod(const std::vector<double>& g) {
  double p = 1;
  for (double x : g) p *= x;
  return p;
}
inline double fmax(const std::vector<double>& g) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : g) m = std::isnan(x) || x > m ? x : m;
  return m;
}
inline double fmin(const std::vector<double>& g) {
  double m = std::numeric_limits<double>::infinity();
  for (double x : g) m = std::isnan(x) || x < m ? x : m;
  return m;
}
inline double fmean(const std::vector<double>& g) { return fsum(g) / static_cast<double>(g.size()); }
inline double fvar(const std::vector<double>& g, int64_t correction) {
  double m = fmean(g), s = 0;
  for (double x : g) s += (x - m) * (x - m);
  return s / static_cast<double>(std::max<int64_t>(static_cast<int64_t>(g.size()) - correction, 0));
}
inline double flogsumexp(const std::vector<double>& g) {
  double m = fmax(g), s = 0;
  for (double x : g) s += std::exp(x - m);
  return std::log(s) + m;
}
inline double fargmax(const std::vector<double>& g) {
  size_t best = 0;
  for (size_t i = 1; i < g.size(); ++i)
    if (g[i] > g[best]) best = i;
  return static_cast<double>(best);
}
inline double fargmin(const std::vector<double>& g) {
  size_t best = 0;
  for (size_t i = 1; i < g.size(); ++i)
    if (g[i] < g[best]) best = i;
  return static_cast<double>(best);
}

// Applies f to each 1-D line along `axis` (in place on a copy).
inline Ref along(const Ref& a, int axis, const std::function<void(std::vector<double>&)>& f) {
  axis = norm_axis(axis, a.ndim());
  Ref out = a;
  const int64_t len = a.shape[axis];
  for (int64_t i = 0; i < a.numel(); ++i) {
    auto idx = a.index_of(i);
    if (idx[axis] != 0) continue;
    std::vector<double> line(len);
    for (int64_t j = 0; j < len; ++j) {
      idx[axis] = j;
      line[j] = a.at(idx);
    }
    f(line);
    for (int64_t j = 0; j < len; ++j) {
      idx[axis] = j;
      out.at(idx) = line[j];
    }
  }
  return out;
}

inline Ref softmax(const Ref& a, int axis) {
  return along(a, axis, [](std::vector<double>& l) {
    double m = fmax(l), s = 0;
    for (double& x : l) s += (x = std::exp(x - m));
    for (double& x : l) x /= s;
  });
}
inline Ref log_softmax(const Ref& a, int axis) {
  return along(a, axis, [](std::vector<double>& l) {
    double lse = flogsumexp(l);
    for (double& x : l) x -= lse;
  });
}
inline Ref cumsum(const Ref& a, int axis) {
  return along(a, axis, [](std::vector<double>& l) {
    double s = 0;
    for (double& x : l) x = (s += x);
  });
}

// ---- movement ----------------------------------------------------------------

// out[idx] = a[src(idx)] for every idx of out_shape.
inline Ref gather_index(const Shape& out_shape, const Ref& a,
                        const std::function<std::vector<int64_t>(const std::vector<int64_t>&)>& src) {
  Ref out = Ref::filled(out_shape, 0);
  for (int64_t i = 0; i < out.numel(); ++i) out.v[i] = a.at(src(out.index_of(i)));
  return out;
}

inline Ref permute(const Ref& a, const std::vector<int>& order) {
  Shape s;
  for (int o : order) s.push_back(a.shape[o]);
  return gather_index(s, a, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t d = 0; d < order.size(); ++d) src[order[d]] = idx[d];
    return src;
  });
}

inline Ref reshape(const Ref& a, const Shape& s) { return Ref(s, a.v); }

// Python slice of one axis with explicit normalized start, step and count.
inline Ref slice(const Ref& a, int axis, int64_t start, int64_t step, int64_t n) {
  Shape s = a.shape;
  s[axis] = n;
  return gather_index(s, a, [&](std::vector<int64_t> idx) {
    idx[axis] = start + idx[axis] * step;
    return idx;
  });
}

inline Ref flip(const Ref& a, int axis) {
  return gather_index(a.shape, a, [&](std::vector<int64_t> idx) {
    idx[axis] = a.shape[axis] - 1 - idx[axis];
    return idx;
  });
}

inline Ref pad_constant(const Ref& a, const std::vector<std::pair<int64_t, int64_t>>& pads, double value) {
  Shape s = a.shape;
  for (size_t d = 0; d < pads.size(); ++d) s[d] += pads[d].first + pads[d].second;
  Ref out = Ref::filled(s, value);
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto idx = out.index_of(i);
    bool inside = true;
    for (size_t d = 0; d < pads.size(); ++d) {
      idx[d] -= pads[d].first;
      inside = inside && idx[d] >= 0 && idx[d] < a.shape[d];
    }
    if (inside) out.v[i] = a.at(idx);
  }
  return out;
}

inline Ref pad_reflect(const Ref& a, const std::vector<std::pair<int64_t, int64_t>>& pads) {
  Shape s = a.shape;
  for (size_t d = 0; d < pads.size(); ++d) s[d] += pads[d].first + pads[d].second;
  return gather_index(s, a, [&](std::vector<int64_t> idx) {
    for (size_t d = 0; d < pads.size(); ++d) {
      int64_t j = idx[d] - pads[d].first, n = a.shape[d];
      if (j < 0) j = -j;
      if (j >= n) j = 2 * (n - 1) - j;
      idx[d] = j;
    }
    return idx;
  });
}

inline Ref cat(const std::vector<Ref>& parts, int axis) {
  Shape s = parts[0].shape;
  s[axis] = 0;
  for (const Ref& p : parts) s[axis] += p.shape[axis];
  Ref out = Ref::filled(s, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto idx = out.index_of(i);
    int64_t j = idx[axis];
    for (const Ref& p : parts) {
      if (j < p.shape[axis]) {
        idx[axis] = j;
        out.v[i] = p.at(idx);
        break;
      }
      j -= p.shape[axis];
    }
  }
  return out;
}

// ---- linear algebra and nn -----------------------------------------------------

// Batched matmul of [..., m, k] x [..., k, n] with broadcast batch axes (both >= 2-D).
inline Ref matmul(const Ref& a, const Ref& b) {
  const int na = a.ndim(), nb = b.ndim();
  const int64_t m = a.shape[na - 2], k = a.shape[na - 1], n = b.shape[nb - 1];
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = broadcast_shape(ba, bb);
  Shape s = batch;
  s.push_back(m);
  s.push_back(n);
  Ref out = Ref::filled(s, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto idx = out.index_of(i);
    std::vector<int64_t> bidx(idx.begin(), idx.end() - 2);
    auto elem = [&](const Ref& x, const Shape& xb, int64_t r, int64_t c) {
      std::vector<int64_t> xi;
      const size_t lead = batch.size() - xb.size();
      for (size_t d = 0; d < xb.size(); ++d) xi.push_back(xb[d] == 1 ? 0 : bidx[d + lead]);
      xi.push_back(r);
      xi.push_back(c);
      return x.at(xi);
    };
    double acc = 0;
    for (int64_t kk = 0; kk < k; ++kk) acc += elem(a, ba, idx[idx.size() - 2], kk) * elem(b, bb, kk, idx.back());
    out.v[i] = acc;
  }
  return out;
}

struct Conv {
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  int64_t out_pad_h = 0, out_pad_w = 0;
};

inline Ref conv2d(const Ref& x, const Ref& w, const Ref* bias, const Conv& p) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t og = o / p.groups;
  const int64_t oh = (h + 2 * p.pad_h - p.dil_h * (kh - 1) - 1) / p.stride_h + 1;
  const int64_t ow = (wd + 2 * p.pad_w - p.dil_w * (kw - 1) - 1) / p.stride_w + 1;
  Ref out = Ref::filled({n, o, oh, ow}, 0);
  (void)c;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias ? bias->v[oc] : 0.0;
          const int64_t g = oc / og;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t iy = y * p.stride_h - p.pad_h + i * p.dil_h, ix = xx * p.stride_w - p.pad_w + j * p.dil_w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += x.at({b, g * cg + ic, iy, ix}) * w.at({oc, ic, i, j});
              }
          out.at({b, oc, y, xx}) = acc;
        }
  return out;
}

// Transposed convolution by its definition: each input element scatters
// x * w into the output window it maps to.
inline Ref conv_transpose2d(const Ref& x, const Ref& w, const Ref* bias, const Conv& p) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t og = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t cg = c / p.groups, o = og * p.groups;
  const int64_t oh = (h - 1) * p.stride_h - 2 * p.pad_h + p.dil_h * (kh - 1) + p.out_pad_h + 1;
  const int64_t ow = (wd - 1) * p.stride_w - 2 * p.pad_w + p.dil_w * (kw - 1) + p.out_pad_w + 1;
  Ref out = Ref::filled({n, o, oh, ow}, 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < wd; ++ix) {
          const int64_t g = ic / cg;
          for (int64_t k = 0; k < og; ++k)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t y = iy * p.stride_h - p.pad_h + i * p.dil_h, xx = ix * p.stride_w - p.pad_w + j * p.dil_w;
                if (y < 0 || y >= oh || xx < 0 || xx >= ow) continue;
                out.at({b, g * og + k, y, xx}) += x.at({b, ic, iy, ix}) * w.at({ic, k, i, j});
              }
        }
  if (bias)
    for (int64_t i = 0; i < out.numel(); ++i) out.v[i] += bias->v[out.index_of(i)[1]];
  return out;
}

inline Ref pool2d(const Ref& x, bool is_max, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                  int64_t dh, int64_t dw, bool count_include_pad) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (wd + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  Ref out = Ref::filled({n, c, oh, ow}, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto idx = out.index_of(i);
    std::vector<double> window;
    for (int64_t a = 0; a < kh; ++a)
      for (int64_t b = 0; b < kw; ++b) {
        int64_t y = idx[2] * sh - ph + a * dh, xx = idx[3] * sw - pw + b * dw;
        if (y >= 0 && y < h && xx >= 0 && xx < wd) window.push_back(x.at({idx[0], idx[1], y, xx}));
      }
    out.v[i] = is_max ? fmax(window)
                      : fsum(window) / static_cast<double>(count_include_pad ? kh * kw : static_cast<int64_t>(window.size()));
  }
  return out;
}

inline double erf_ref(double x) { return std::erf(x); }

}  // namespace nvhcq::ref
