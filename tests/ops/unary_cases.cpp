// Unary elementwise ops over every dtype they accept, on shapes from scalars to
// 127x127 and 4097, read through contiguous and non-contiguous views.
#include <cmath>

#include "ops/op_cases.h"

namespace nvhcq::optest {
namespace {

struct UnarySpec {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  Domain domain;
  double tol_scale = 1;
};

double gelu_erf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }
double sign_of(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

const std::vector<UnarySpec>& float_specs() {
  static const std::vector<UnarySpec> specs = {
      {"neg", [](const Tensor& x) { return x.neg(); }, [](double x) { return -x; }, {-3, 3}},
      {"abs", [](const Tensor& x) { return x.abs(); }, [](double x) { return std::fabs(x); }, {-3, 3}},
      {"exp", [](const Tensor& x) { return x.exp(); }, [](double x) { return std::exp(x); }, {-5, 5}},
      {"exp2", [](const Tensor& x) { return x.exp2(); }, [](double x) { return std::exp2(x); }, {-5, 5}},
      {"log", [](const Tensor& x) { return x.log(); }, [](double x) { return std::log(x); }, {0.05, 10}},
      {"log2", [](const Tensor& x) { return x.log2(); }, [](double x) { return std::log2(x); }, {0.05, 10}},
      {"log1p", [](const Tensor& x) { return x.log1p(); }, [](double x) { return std::log1p(x); }, {-0.9, 5}},
      {"expm1", [](const Tensor& x) { return x.expm1(); }, [](double x) { return std::expm1(x); }, {-3, 3}},
      {"sqrt", [](const Tensor& x) { return x.sqrt(); }, [](double x) { return std::sqrt(x); }, {0, 10}},
      {"rsqrt", [](const Tensor& x) { return x.rsqrt(); }, [](double x) { return 1 / std::sqrt(x); }, {0.05, 10}},
      {"reciprocal", [](const Tensor& x) { return x.reciprocal(); }, [](double x) { return 1 / x; }, {0.1, 5}},
      {"square", [](const Tensor& x) { return x.square(); }, [](double x) { return x * x; }, {-3, 3}},
      {"sin", [](const Tensor& x) { return x.sin(); }, [](double x) { return std::sin(x); }, {-6, 6}},
      {"cos", [](const Tensor& x) { return x.cos(); }, [](double x) { return std::cos(x); }, {-6, 6}},
      {"tan", [](const Tensor& x) { return x.tan(); }, [](double x) { return std::tan(x); }, {-1.4, 1.4}, 2},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, [](double x) { return std::tanh(x); }, {-4, 4}},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }, [](double x) { return 1 / (1 + std::exp(-x)); }, {-8, 8}},
      {"erf", [](const Tensor& x) { return x.erf(); }, [](double x) { return std::erf(x); }, {-3, 3}},
      {"relu", [](const Tensor& x) { return x.relu(); }, [](double x) { return x > 0 ? x : 0; }, {-3, 3}},
      {"leaky_relu", [](const Tensor& x) { return x.leaky_relu(0.1); }, [](double x) { return x > 0 ? x : 0.1 * x; }, {-3, 3}},
      {"gelu", [](const Tensor& x) { return x.gelu(); }, gelu_erf, {-4, 4}, 4},
      {"gelu_tanh", [](const Tensor& x) { return x.gelu(true); }, gelu_tanh, {-4, 4}, 4},
      {"silu", [](const Tensor& x) { return x.silu(); }, [](double x) { return x / (1 + std::exp(-x)); }, {-6, 6}, 4},
      {"softplus", [](const Tensor& x) { return x.softplus(); }, softplus, {-25, 25}, 4},
      {"floor", [](const Tensor& x) { return x.floor(); }, [](double x) { return std::floor(x); }, {-4, 4}},
      {"ceil", [](const Tensor& x) { return x.ceil(); }, [](double x) { return std::ceil(x); }, {-4, 4}},
      {"round", [](const Tensor& x) { return x.round(); }, [](double x) { return std::nearbyint(x); }, {-4, 4}},
      {"trunc", [](const Tensor& x) { return x.trunc(); }, [](double x) { return std::trunc(x); }, {-4, 4}},
      {"sign", [](const Tensor& x) { return x.sign(); }, sign_of, {-3, 3}},
      {"clamp", [](const Tensor& x) { return x.clamp(-1.0, 1.5); }, [](double x) { return std::min(std::max(x, -1.0), 1.5); }, {-3, 3}},
  };
  return specs;
}

// Ops valid on integer dtypes; results wrap to the dtype.
const std::vector<UnarySpec>& int_specs() {
  static const std::vector<UnarySpec> specs = {
      {"neg", [](const Tensor& x) { return x.neg(); }, [](double x) { return -x; }, {-100, 100}},
      {"abs", [](const Tensor& x) { return x.abs(); }, [](double x) { return std::fabs(x); }, {-100, 100}},
      {"sign", [](const Tensor& x) { return x.sign(); }, sign_of, {-5, 5}},
      {"square", [](const Tensor& x) { return x.square(); }, [](double x) { return x * x; }, {-11, 11}},
      {"relu", [](const Tensor& x) { return x.relu(); }, [](double x) { return x > 0 ? x : 0; }, {-50, 50}},
      {"bitwise_not", [](const Tensor& x) { return x.bitwise_not(); }, [](double x) { return -x - 1; }, {-100, 100}},
      {"clamp", [](const Tensor& x) { return x.clamp(-3, 7); }, [](double x) { return std::min(std::max(x, -3.0), 7.0); }, {-20, 20}},
  };
  return specs;
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {{7}, {13, 17}, {1023}, {4097}, {}, {0, 5}, {127, 127}, {3, 1, 5}, {2, 3, 4}};
  return s;
}
const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided,
                                        Layout::kFlipped,    Layout::kBroadcast,  Layout::kPadded};
  return l;
}

OpCase unary_case(const UnarySpec& spec, DType in, DType out, int variant) {
  const Shape shape = shapes()[variant % shapes().size()];
  const Layout layout = effective_layout(shape, layouts()[(variant / 2 + variant) % layouts().size()]);
  Domain dom = spec.domain;
  if (in == DType::kU8) dom.lo = std::max(dom.lo, 0.0);
  std::string name = join_name({spec.name, dname(in), shape_name(shape), layout_name(layout)});
  return {sanitize(name), {in, out}, [=](const std::string& device) {
            Rng rng(name);
            Input x = make_input(rng, shape, in, device, layout, dom);
            Ref expected = wrap_to(ref::map(x.r, spec.ref), out);
            EXPECT_TRUE(matches(spec.op(x.t), expected, out, tol_for(out, spec.tol_scale))) << name;
          }};
}

}  // namespace

std::vector<OpCase> unary_cases() {
  std::vector<OpCase> cases;
  int variant = 0;
  for (const auto& spec : float_specs()) {
    for (DType t : float_dtypes()) cases.push_back(unary_case(spec, t, t, variant++));
  }
  for (const auto& spec : int_specs()) {
    for (DType t : int_dtypes()) {
      const std::string n = spec.name;
      if (t == DType::kU8 && (n == "sign" || n == "relu" || n == "clamp")) continue;  // negative constants
      cases.push_back(unary_case(spec, t, t, variant++));
    }
  }
  // Float math on integer inputs computes in f32.
  for (const char* name : {"exp", "sqrt", "sigmoid", "log"}) {
    for (const auto& spec : float_specs()) {
      if (std::string(spec.name) != name) continue;
      UnarySpec s = spec;
      s.domain = {1, 9, true};
      cases.push_back(unary_case(s, DType::kI32, DType::kF32, variant++));
      cases.push_back(unary_case(s, DType::kU8, DType::kF32, variant++));
    }
  }
  // Rounding ops on integers return the input.
  for (const char* name : {"floor", "round"}) {
    for (const auto& spec : float_specs()) {
      if (std::string(spec.name) != name) continue;
      UnarySpec s = spec;
      s.domain = {-50, 50, true};
      cases.push_back(unary_case(s, DType::kI16, DType::kI16, variant++));
    }
  }
  // logical_not of every dtype gives bool.
  for (DType t : {DType::kBool, DType::kF32, DType::kI32, DType::kBF16}) {
    UnarySpec s{"logical_not", [](const Tensor& x) { return x.logical_not(); }, [](double x) { return x == 0 ? 1.0 : 0.0; },
                {-2, 2, true}};
    cases.push_back(unary_case(s, t, DType::kBool, variant++));
  }
  // bitwise_not of bool is logical not.
  cases.push_back(unary_case({"bitwise_not", [](const Tensor& x) { return x.bitwise_not(); },
                              [](double x) { return x == 0 ? 1.0 : 0.0; }, {0, 1, true}},
                             DType::kBool, DType::kBool, variant++));
  // Special values: NaN, infinities, signed zeros.
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    cases.push_back({join_name({"special_values", dname(t)}), {t, DType::kBool}, [t](const std::string& device) {
                       const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
                       std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1.5, -2.0};
                       Tensor x = Tensor::from_vector<double>(v, {7}, t, device);
                       Ref r({7}, v);
                       EXPECT_TRUE(matches(x.isnan(), ref::map(r, [](double a) { return std::isnan(a) ? 1.0 : 0.0; }), DType::kBool, {}));
                       EXPECT_TRUE(matches(x.isinf(), ref::map(r, [](double a) { return std::isinf(a) ? 1.0 : 0.0; }), DType::kBool, {}));
                       EXPECT_TRUE(matches(x.exp(), ref::map(r, [](double a) { return std::exp(a); }), t, tol_for(t)));
                       EXPECT_TRUE(matches(x.relu(), ref::map(r, [](double a) { return std::isnan(a) ? a : (a > 0 ? a : 0.0); }), t, tol_for(t)));
                       EXPECT_TRUE(matches(x.sigmoid(), ref::map(r, [](double a) { return 1 / (1 + std::exp(-a)); }), t, tol_for(t)));
                       EXPECT_TRUE(matches(x.abs(), ref::map(r, [](double a) { return std::fabs(a); }), t, tol_for(t)));
                     }});
  }
  return cases;
}

TEST_P(UnaryOps, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(UnaryOps);

}  // namespace nvhcq::optest
