// Reductions over any axes with keepdim, statistics, softmax and cumsum, on
// contiguous and non-contiguous inputs, including scalars and zero-size tensors.
#include <cmath>

#include "ops/op_cases.h"

namespace nvhcq::optest {
namespace {

struct Config {
  Shape shape;
  std::vector<int> axes;
  bool keepdim;
};

const std::vector<Config>& configs() {
  static const std::vector<Config> c = {
      {{7}, {}, false},         {{13, 17}, {0}, false},   {{13, 17}, {1}, true},     {{13, 17}, {-1, 0}, false},
      {{4097}, {0}, false},     {{127, 127}, {0}, true},  {{2, 3, 4}, {0, 2}, false}, {{3, 0, 5}, {2}, false},
      {{}, {}, false},          {{1023, 4}, {0}, false},  {{5, 6, 7}, {1}, true},     {{127, 127}, {1}, false}};
  return c;
}
const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {Layout::kContiguous, Layout::kTransposed, Layout::kFlipped, Layout::kStrided,
                                        Layout::kPadded,     Layout::kBroadcast};
  return l;
}

enum class Kind { kSum, kMean, kProd, kMax, kMin, kArgMax, kArgMin, kAny, kAll, kVar, kVar0, kStd, kLogSumExp, kSoftmax, kLogSoftmax, kCumsum };

struct Spec {
  const char* name;
  Kind kind;
  std::vector<DType> dtypes;
};

DType out_dtype(Kind k, DType in) {
  switch (k) {
    case Kind::kSum: case Kind::kProd: case Kind::kCumsum: return tensor::is_float(in) ? in : DType::kI64;
    case Kind::kMax: case Kind::kMin: return in;
    case Kind::kArgMax: case Kind::kArgMin: return DType::kI64;
    case Kind::kAny: case Kind::kAll: return DType::kBool;
    default: return tensor::is_float(in) ? in : DType::kF32;
  }
}

Domain domain_for(Kind k, DType t) {
  if (t == DType::kBool) return {0, 1, true};
  switch (k) {
    case Kind::kProd: return tensor::is_float(t) ? Domain{0.7, 1.4} : Domain{-2, 2, true};
    case Kind::kAny: case Kind::kAll: return {0, 9, true};
    case Kind::kArgMax: case Kind::kArgMin: return tensor::is_float(t) ? Domain{-100, 100} : Domain{-5, 5, true};
    case Kind::kLogSumExp: case Kind::kSoftmax: case Kind::kLogSoftmax: return {-8, 8};
    default: return tensor::is_float(t) ? Domain{-2, 2} : Domain{-20, 20, true};
  }
}

Tensor apply(Kind k, const Tensor& x, const Config& c) {
  const int axis = c.axes.empty() ? -1 : c.axes[0];
  switch (k) {
    case Kind::kSum: return x.sum(c.axes, c.keepdim);
    case Kind::kMean: return x.mean(c.axes, c.keepdim);
    case Kind::kProd: return x.prod(c.axes, c.keepdim);
    case Kind::kMax: return x.max(c.axes, c.keepdim);
    case Kind::kMin: return x.min(c.axes, c.keepdim);
    case Kind::kArgMax: return c.axes.empty() ? x.argmax(std::nullopt, c.keepdim) : x.argmax(axis, c.keepdim);
    case Kind::kArgMin: return c.axes.empty() ? x.argmin(std::nullopt, c.keepdim) : x.argmin(axis, c.keepdim);
    case Kind::kAny: return x.any(c.axes, c.keepdim);
    case Kind::kAll: return x.all(c.axes, c.keepdim);
    case Kind::kVar: return x.var(c.axes, 1, c.keepdim);
    case Kind::kVar0: return x.var(c.axes, 0, c.keepdim);
    case Kind::kStd: return x.std(c.axes, 1, c.keepdim);
    case Kind::kLogSumExp: return x.logsumexp(c.axes, c.keepdim);
    case Kind::kSoftmax: return x.softmax(axis);
    case Kind::kLogSoftmax: return x.log_softmax(axis);
    case Kind::kCumsum: return x.cumsum(axis);
  }
  return x;
}

Ref reference(Kind k, const Ref& x, const Config& c) {
  const int axis = c.axes.empty() ? -1 : c.axes[0];
  auto red = [&](auto fold) { return ref::reduce(x, c.axes, c.keepdim, fold); };
  auto arg = [&](auto fold) {
    if (!c.axes.empty()) return ref::reduce(x, {axis}, c.keepdim, fold);
    Ref r = ref::reduce(x, {}, false, fold);
    if (c.keepdim) r.shape = Shape(x.shape.size(), 1);
    return r;
  };
  if (x.ndim() == 0) {
    if (k == Kind::kSoftmax) return Ref({}, {1.0});
    if (k == Kind::kLogSoftmax) return Ref({}, {0.0});
    if (k == Kind::kCumsum) return x;
  }
  switch (k) {
    case Kind::kSum: return red(ref::fsum);
    case Kind::kMean: return red(ref::fmean);
    case Kind::kProd: return red(ref::fprod);
    case Kind::kMax: return red(ref::fmax);
    case Kind::kMin: return red(ref::fmin);
    case Kind::kArgMax: return arg(ref::fargmax);
    case Kind::kArgMin: return arg(ref::fargmin);
    case Kind::kAny: return red([](const std::vector<double>& g) { return double(std::any_of(g.begin(), g.end(), [](double v) { return v != 0; })); });
    case Kind::kAll: return red([](const std::vector<double>& g) { return double(std::all_of(g.begin(), g.end(), [](double v) { return v != 0; })); });
    case Kind::kVar: return red([](const std::vector<double>& g) { return ref::fvar(g, 1); });
    case Kind::kVar0: return red([](const std::vector<double>& g) { return ref::fvar(g, 0); });
    case Kind::kStd: return red([](const std::vector<double>& g) { return std::sqrt(ref::fvar(g, 1)); });
    case Kind::kLogSumExp: return red(ref::flogsumexp);
    case Kind::kSoftmax: return ref::softmax(x, axis);
    case Kind::kLogSoftmax: return ref::log_softmax(x, axis);
    case Kind::kCumsum: return ref::cumsum(x, axis);
  }
  return x;
}

bool config_ok(Kind k, const Config& c) {
  const bool extreme = k == Kind::kMax || k == Kind::kMin || k == Kind::kArgMax || k == Kind::kArgMin || k == Kind::kLogSumExp;
  if (extreme && ref::count(c.shape) == 0) return false;  // no value; tested in the error suite
  if (k == Kind::kProd && ref::count(c.shape) > 400) return false;  // keep products in range
  if ((k == Kind::kArgMax || k == Kind::kArgMin) && c.axes.size() > 1) return false;
  return true;
}

}  // namespace

std::vector<OpCase> reduction_cases() {
  const std::vector<Spec> specs = {
      {"sum", Kind::kSum, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kU8, DType::kBool, DType::kI64}},
      {"mean", Kind::kMean, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32}},
      {"prod", Kind::kProd, {DType::kF32, DType::kF64, DType::kI32, DType::kF16}},
      {"max", Kind::kMax, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8, DType::kU8, DType::kI64}},
      {"min", Kind::kMin, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8, DType::kU8, DType::kI64}},
      {"argmax", Kind::kArgMax, {DType::kF32, DType::kF16, DType::kI32, DType::kF64, DType::kBF16}},
      {"argmin", Kind::kArgMin, {DType::kF32, DType::kF16, DType::kI32, DType::kF64, DType::kBF16}},
      {"any", Kind::kAny, {DType::kBool, DType::kF32, DType::kI32}},
      {"all", Kind::kAll, {DType::kBool, DType::kF32, DType::kI32}},
      {"var", Kind::kVar, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}},
      {"var_biased", Kind::kVar0, {DType::kF32, DType::kF64}},
      {"std", Kind::kStd, {DType::kF32, DType::kF64, DType::kF16}},
      {"logsumexp", Kind::kLogSumExp, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}},
      {"softmax", Kind::kSoftmax, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}},
      {"log_softmax", Kind::kLogSoftmax, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}},
      {"cumsum", Kind::kCumsum, {DType::kF32, DType::kF64, DType::kF16, DType::kI32, DType::kBool}},
  };
  std::vector<OpCase> cases;
  int variant = 0;
  for (const auto& spec : specs) {
    for (DType t : spec.dtypes) {
      for (int rep = 0; rep < 2; ++rep) {
        // Two configurations per (op, dtype), different for every pair.
        Config c;
        int tries = 0;
        do {
          c = configs()[(variant * 5 + rep * 7 + tries) % configs().size()];
          ++tries;
        } while (!config_ok(spec.kind, c));
        const Layout layout = effective_layout(c.shape, layouts()[(variant + rep) % layouts().size()]);
        const Kind kind = spec.kind;
        std::string axes;
        for (int a : c.axes) axes.append(a < 0 ? "m" : "").append(std::to_string(a < 0 ? -a : a));
        const std::string name = sanitize(join_name({spec.name, dname(t), shape_name(c.shape), std::string("ax").append(axes.empty() ? "all" : axes),
                                                     c.keepdim ? "keep" : "", layout_name(layout)}));
        const DType out = out_dtype(kind, t);
        cases.push_back({name, {t, out}, [=](const std::string& device) {
                           Rng rng(name);
                           Input x = make_input(rng, c.shape, t, device, layout, domain_for(kind, t));
                           Ref expected = reference(kind, x.r, c);
                           // Sums of n terms carry about sqrt(n) roundings of the terms' size.
                           Tol tol = tol_for(out, 2);
                           const double n = static_cast<double>(std::max<int64_t>(1, x.r.numel() / std::max<int64_t>(1, expected.numel())));
                           tol.atol += tol.rtol * 4 * std::sqrt(n);
                           EXPECT_TRUE(matches(apply(kind, x.t, c), expected, out, tol)) << name;
                         }});
      }
      ++variant;
    }
  }
  // Reducing a zero-size axis: sums are 0, products 1, any false, all true.
  cases.push_back({"empty_axis_identities", {DType::kF32}, [](const std::string& device) {
                     Tensor x = Tensor::zeros({3, 0, 4}, DType::kF32, device);
                     EXPECT_TRUE(matches(x.sum({1}), Ref::filled({3, 4}, 0), DType::kF32, {}));
                     EXPECT_TRUE(matches(x.prod({1}), Ref::filled({3, 4}, 1), DType::kF32, {}));
                     EXPECT_TRUE(matches(x.any({1}), Ref::filled({3, 4}, 0), DType::kBool, {}));
                     EXPECT_TRUE(matches(x.all({1}), Ref::filled({3, 4}, 1), DType::kBool, {}));
                     EXPECT_TRUE(matches(x.sum(), Ref({}, {0.0}), DType::kF32, {}));
                   }});
  // argmax picks the first of equal maxima; max propagates NaN.
  cases.push_back({"argmax_ties_and_nan", {DType::kF32}, [](const std::string& device) {
                     Tensor x = Tensor::from_vector<float>({1, 5, 5, 2, 7, 7, 0, 7}, {2, 4}, DType::kF32, device);
                     EXPECT_TRUE(matches(x.argmax(1), Ref({2}, {1, 0}), DType::kI64, {}));
                     EXPECT_TRUE(matches(x.argmin(1), Ref({2}, {0, 2}), DType::kI64, {}));
                     Tensor y = Tensor::from_vector<float>({1, NAN, 3}, {3}, DType::kF32, device);
                     EXPECT_TRUE(std::isnan(y.max().item<float>()));
                   }});
  return cases;
}

TEST_P(Reductions, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Reductions);

}  // namespace nvhcq::optest
