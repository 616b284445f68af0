#pragma once
// Shared machinery of the op suite (header-only: the *_cases.cpp files that use it
// are compiled into test_ops and into test_gpu).
//
// A case is a name plus a function run(device) that builds inputs on `device`,
// runs one op through the Tensor API and compares the result with the float64
// reference of op_reference.h. Inputs are deterministic (seeded from the case
// name), exactly representable in their dtype, and may be non-contiguous views
// (transposed, strided, flipped, broadcast, padded) whose unused storage holds
// poison values.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "ops/op_reference.h"
#include "tensor/tensor.h"

namespace nvhcq::optest {

using ref::Ref;
using tensor::DType;
using tensor::PadMode;
using tensor::Shape;
using tensor::Tensor;

// ---- cases and parameters ----------------------------------------------------

struct OpCase {
  std::string name;                 // unique within its suite: letters, digits, '_'
  std::vector<DType> dtypes;        // dtypes the case uses (a backend may skip some)
  std::function<void(const std::string& device)> run;
};

struct OpParam {
  std::string backend;
  OpCase c;
};

inline std::vector<OpParam> with_backend(const std::string& backend, const std::vector<OpCase>& cases) {
  std::vector<OpParam> out;
  for (const auto& c : cases) out.push_back({backend, c});
  return out;
}

// Keeps the cases whose dtypes all satisfy `supported` (a GPU backend without
// f64, for example, passes [](DType t) { return t != DType::kF64; }).
inline std::vector<OpParam> with_backend(const std::string& backend, const std::vector<OpCase>& cases,
                                         const std::function<bool(DType)>& supported) {
  std::vector<OpParam> out;
  for (const auto& c : cases) {
    bool ok = true;
    for (DType t : c.dtypes) ok = ok && supported(t);
    if (ok) out.push_back({backend, c});
  }
  return out;
}

inline std::string param_name(const ::testing::TestParamInfo<OpParam>& info) { return info.param.c.name; }
inline void PrintTo(const OpParam& p, std::ostream* os) { *os << p.backend << ":" << p.c.name; }

// Joins name parts with '_' (appending, which also sidesteps a GCC 12 -Wrestrict
// false positive on chained std::string operator+).
inline std::string join_name(std::initializer_list<std::string> parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out.append("_");
    out.append(p);
  }
  return out;
}

class OpSuite : public ::testing::TestWithParam<OpParam> {
 protected:
  void run_case() { GetParam().c.run(GetParam().backend); }
};

inline std::string sanitize(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

inline std::string dname(DType t) { return tensor::dtype_name(t); }

inline std::string shape_name(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out.append(i ? "x" : "").append(std::to_string(s[i]));
  return out;
}

// ---- deterministic data -------------------------------------------------------

class Rng {
 public:
  explicit Rng(const std::string& seed_text) {
    state_ = 0x9E3779B97F4A7C15ull;
    for (char c : seed_text) state_ = (state_ ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  }
  uint64_t next() {  // splitmix64
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }
  int64_t integer(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }

 private:
  uint64_t state_;
};

// Rounds to `bits` significant bits, ties to even (frexp-based, independent of src/).
inline double round_bits(double x, int bits) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e;
  double m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits);
}

// The nearest value representable in dtype t (inputs are made exactly representable).
inline double representable(double x, DType t) {
  switch (t) {
    case DType::kF64: return x;
    case DType::kF32: return round_bits(x, 24);
    case DType::kBF16: return round_bits(x, 8);
    case DType::kF16:
      if (std::fabs(x) < std::ldexp(1.0, -14)) return std::nearbyint(std::ldexp(x, 24)) * std::ldexp(1.0, -24);
      return round_bits(x, 11);
    case DType::kBool: return x != 0 ? 1 : 0;
    default: return std::trunc(x);
  }
}

inline bool is_float_dtype(DType t) { return tensor::is_float(t); }

// Where input values come from.
struct Domain {
  double lo = -3, hi = 3;
  bool integers = false;  // draw integers in [lo, hi] (forced for integer dtypes)
};

inline std::vector<double> draw(Rng& rng, int64_t n, DType t, const Domain& d) {
  std::vector<double> v(static_cast<size_t>(n));
  Domain dom = d;
  if (t == DType::kU8) dom.lo = std::max(dom.lo, 0.0);
  for (auto& x : v) {
    if (t == DType::kBool) x = static_cast<double>(rng.next() & 1);
    else if (dom.integers || !is_float_dtype(t))
      x = static_cast<double>(rng.integer(static_cast<int64_t>(std::ceil(dom.lo)), static_cast<int64_t>(std::floor(dom.hi))));
    else x = representable(rng.uniform(dom.lo, dom.hi), t);
  }
  return v;
}

enum class Layout { kContiguous, kTransposed, kStrided, kFlipped, kBroadcast, kPadded };

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous: return "contig";
    case Layout::kTransposed: return "transposed";
    case Layout::kStrided: return "strided";
    case Layout::kFlipped: return "flipped";
    case Layout::kBroadcast: return "bcast";
    case Layout::kPadded: return "padded";
  }
  return "?";
}

inline double poison_value(DType t) { return is_float_dtype(t) ? std::numeric_limits<double>::quiet_NaN() : 77.0; }

// A tensor on `device` and its float64 reference values.
struct Input {
  Tensor t;
  Ref r;
};

inline Tensor upload(const Ref& r, DType t, const std::string& device) {
  return Tensor::from_vector<double>(r.v, r.shape, t, device);
}

// Makes an input of logical shape `shape` whose elements are read through the given
// layout (a view over differently arranged storage).
// The layout make_input really uses for a shape: scalars and empty tensors are
// contiguous; layouts a shape cannot have (transposing 1-D) fall back to a flip.
inline Layout effective_layout(const Shape& shape, Layout layout) {
  const int nd = static_cast<int>(shape.size());
  const bool big_enough = nd >= 1 && shape[0] >= 3;
  if (nd == 0 || ref::count(shape) == 0) return Layout::kContiguous;
  if ((layout == Layout::kTransposed && nd < 2) || ((layout == Layout::kBroadcast || layout == Layout::kPadded) && !big_enough)) {
    return Layout::kFlipped;
  }
  return layout;
}

inline Input make_input(Rng& rng, const Shape& shape, DType t, const std::string& device, Layout layout = Layout::kContiguous,
                        const Domain& dom = {}) {
  const int nd = static_cast<int>(shape.size());
  layout = effective_layout(shape, layout);
  switch (layout) {
    case Layout::kContiguous: {
      Ref r(shape, draw(rng, ref::count(shape), t, dom));
      return {upload(r, t, device), r};
    }
    case Layout::kTransposed: {
      Ref r(shape, draw(rng, ref::count(shape), t, dom));
      std::vector<int> rev(nd);
      for (int i = 0; i < nd; ++i) rev[i] = nd - 1 - i;
      Ref storage = ref::permute(r, rev);
      return {upload(storage, t, device).permute(rev), r};
    }
    case Layout::kStrided: {
      Ref r(shape, draw(rng, ref::count(shape), t, dom));
      Shape wide = shape;
      wide.back() *= 2;
      Ref storage = Ref::filled(wide, poison_value(t));
      for (int64_t i = 0; i < r.numel(); ++i) {
        auto idx = r.index_of(i);
        idx.back() *= 2;
        storage.at(idx) = r.v[i];
      }
      return {upload(storage, t, device).slice(-1, 0, std::nullopt, 2), r};
    }
    case Layout::kFlipped: {
      Ref r(shape, draw(rng, ref::count(shape), t, dom));
      return {upload(ref::flip(r, 0), t, device).flip({0}), r};
    }
    case Layout::kBroadcast: {
      Shape one = shape;
      one[0] = 1;
      Ref small(one, draw(rng, ref::count(one), t, dom));
      Ref r = Ref::filled(shape, 0);
      for (int64_t i = 0; i < r.numel(); ++i) {
        auto idx = r.index_of(i);
        idx[0] = 0;
        r.v[i] = small.at(idx);
      }
      return {upload(small, t, device).expand(shape), r};
    }
    case Layout::kPadded: {
      Shape inner = shape;
      inner[0] -= 2;
      Ref base(inner, draw(rng, ref::count(inner), t, dom));
      const double lo = t == DType::kU8 ? std::max(dom.lo, 0.0) : dom.lo;
      double fill = t == DType::kBool ? 1.0 : representable(dom.integers || !is_float_dtype(t) ? std::ceil(lo) : lo, t);
      Ref r = ref::pad_constant(base, {{1, 1}}, fill);
      return {upload(base, t, device).pad({{1, 1}}, PadMode::kConstant, fill), r};
    }
  }
  return {};
}

// ---- comparison -----------------------------------------------------------------

struct Tol {
  double rtol = 0, atol = 0;
};

// Per-dtype tolerance of a result rounded once to `t`, scaled for ops that add
// error (long reductions, composites).
inline Tol tol_for(DType t, double scale = 1.0) {
  switch (t) {
    case DType::kF64: return {1e-12 * scale, 1e-12 * scale};
    case DType::kF32: return {2e-6 * scale, 1e-6 * scale};
    case DType::kF16: return {2e-3 * scale, 1e-3 * scale};
    case DType::kBF16: return {1.6e-2 * scale, 1e-2 * scale};
    default: return {0, 0};
  }
}

inline ::testing::AssertionResult matches(const Tensor& got, const Ref& expected, DType dtype, Tol tol) {
  if (got.dtype() != dtype) {
    return ::testing::AssertionFailure() << "dtype " << dname(got.dtype()) << ", expected " << dname(dtype);
  }
  if (got.shape() != expected.shape) {
    return ::testing::AssertionFailure() << "shape " << shape_name(got.shape()) << ", expected " << shape_name(expected.shape);
  }
  std::vector<double> v = got.to_vector<double>();
  int64_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < v.size(); ++i) {
    const double e = expected.v[i], g = v[i];
    bool ok;
    if (std::isnan(e) || std::isnan(g)) ok = std::isnan(e) && std::isnan(g);
    else if (std::isinf(e) || std::isinf(g)) ok = e == g;
    else ok = std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e);
    if (!ok && bad++ < 5) first << "\n  [" << i << "] got " << g << ", expected " << e;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << v.size() << " elements differ (" << dname(dtype)
                                       << ", rtol " << tol.rtol << ", atol " << tol.atol << "):" << first.str();
}

// Expects `f` to throw nvhcq::Error whose message mentions `keyword`.
template <typename F>
::testing::AssertionResult throws_error(F f, const std::string& keyword) {
  try {
    Tensor t = f();
    t.realize();
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.empty()) return ::testing::AssertionFailure() << "Error with an empty message";
    if (what.find(keyword) == std::string::npos) {
      return ::testing::AssertionFailure() << "message '" << what << "' does not mention '" << keyword << "'";
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-nvhcq exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace nvhcq::optest
