// Binary elementwise ops: arithmetic, comparison, logical and bitwise ops over
// every dtype they accept, with broadcasting, views, dtype promotion and scalars.
#include <cmath>

#include "ops/op_cases.h"

namespace nvhcq::optest {
namespace {

struct BinarySpec {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
  Domain a, b;
  bool returns_bool = false;
  double tol_scale = 1;
};

double py_mod(double a, double b) {
  if (b == 0) return 0;  // integer x mod 0 is defined as 0
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double int_pow(double a, double b) {
  double r = 1;
  for (int i = 0; i < static_cast<int>(b); ++i) r *= a;
  return r;
}

const std::vector<BinarySpec>& float_specs() {
  static const std::vector<BinarySpec> specs = {
      {"add", [](auto& a, auto& b) { return a + b; }, [](double a, double b) { return a + b; }, {-3, 3}, {-3, 3}},
      {"sub", [](auto& a, auto& b) { return a - b; }, [](double a, double b) { return a - b; }, {-3, 3}, {-3, 3}},
      {"mul", [](auto& a, auto& b) { return a * b; }, [](double a, double b) { return a * b; }, {-3, 3}, {-3, 3}},
      {"div", [](auto& a, auto& b) { return a / b; }, [](double a, double b) { return a / b; }, {-3, 3}, {0.5, 3}},
      {"pow", [](auto& a, auto& b) { return a.pow(b); }, [](double a, double b) { return std::pow(a, b); }, {0.1, 3}, {-2, 2}, false, 2},
      {"maximum", [](auto& a, auto& b) { return a.maximum(b); }, [](double a, double b) { return std::max(a, b); }, {-3, 3}, {-3, 3}},
      {"minimum", [](auto& a, auto& b) { return a.minimum(b); }, [](double a, double b) { return std::min(a, b); }, {-3, 3}, {-3, 3}},
      {"mod", [](auto& a, auto& b) { return a.mod(b); }, py_mod, {-5, 5}, {0.5, 3}, false, 4},
      {"lt", [](auto& a, auto& b) { return a.lt(b); }, [](double a, double b) { return double(a < b); }, {-3, 3, true}, {-3, 3, true}, true},
      {"le", [](auto& a, auto& b) { return a.le(b); }, [](double a, double b) { return double(a <= b); }, {-3, 3, true}, {-3, 3, true}, true},
      {"eq", [](auto& a, auto& b) { return a.eq(b); }, [](double a, double b) { return double(a == b); }, {-3, 3, true}, {-3, 3, true}, true},
      {"ne", [](auto& a, auto& b) { return a.ne(b); }, [](double a, double b) { return double(a != b); }, {-3, 3, true}, {-3, 3, true}, true},
      {"gt", [](auto& a, auto& b) { return a.gt(b); }, [](double a, double b) { return double(a > b); }, {-3, 3, true}, {-3, 3, true}, true},
      {"ge", [](auto& a, auto& b) { return a.ge(b); }, [](double a, double b) { return double(a >= b); }, {-3, 3, true}, {-3, 3, true}, true},
  };
  return specs;
}

const std::vector<BinarySpec>& int_specs() {
  static const std::vector<BinarySpec> specs = {
      {"add", [](auto& a, auto& b) { return a + b; }, [](double a, double b) { return a + b; }, {-60, 60}, {-60, 60}},
      {"sub", [](auto& a, auto& b) { return a - b; }, [](double a, double b) { return a - b; }, {-60, 60}, {-60, 60}},
      {"mul", [](auto& a, auto& b) { return a * b; }, [](double a, double b) { return a * b; }, {-11, 11}, {-11, 11}},
      {"mod", [](auto& a, auto& b) { return a.mod(b); }, py_mod, {-50, 50}, {1, 9}},
      {"pow", [](auto& a, auto& b) { return a.pow(b); }, int_pow, {-3, 3}, {0, 4}},
      {"maximum", [](auto& a, auto& b) { return a.maximum(b); }, [](double a, double b) { return std::max(a, b); }, {-50, 50}, {-50, 50}},
      {"minimum", [](auto& a, auto& b) { return a.minimum(b); }, [](double a, double b) { return std::min(a, b); }, {-50, 50}, {-50, 50}},
      {"lt", [](auto& a, auto& b) { return a.lt(b); }, [](double a, double b) { return double(a < b); }, {-4, 4}, {-4, 4}, true},
      {"eq", [](auto& a, auto& b) { return a.eq(b); }, [](double a, double b) { return double(a == b); }, {-4, 4}, {-4, 4}, true},
      {"ge", [](auto& a, auto& b) { return a.ge(b); }, [](double a, double b) { return double(a >= b); }, {-4, 4}, {-4, 4}, true},
      {"bitwise_and", [](auto& a, auto& b) { return a.bitwise_and(b); },
       [](double a, double b) { return double(int64_t(a) & int64_t(b)); }, {-100, 100}, {-100, 100}},
      {"bitwise_or", [](auto& a, auto& b) { return a.bitwise_or(b); },
       [](double a, double b) { return double(int64_t(a) | int64_t(b)); }, {-100, 100}, {-100, 100}},
      {"bitwise_xor", [](auto& a, auto& b) { return a.bitwise_xor(b); },
       [](double a, double b) { return double(int64_t(a) ^ int64_t(b)); }, {-100, 100}, {-100, 100}},
      {"shl", [](auto& a, auto& b) { return a.shl(b); }, [](double a, double b) { return a * std::ldexp(1.0, int(b)); }, {-40, 40}, {0, 6}},
      {"shr", [](auto& a, auto& b) { return a.shr(b); }, [](double a, double b) { return std::floor(a / std::ldexp(1.0, int(b))); }, {-100, 100}, {0, 6}},
  };
  return specs;
}

struct ShapePair {
  Shape a, b;
};
const std::vector<ShapePair>& shape_pairs() {
  static const std::vector<ShapePair> p = {
      {{7}, {7}},         {{13, 17}, {17}},   {{13, 1}, {1, 17}},   {{1023}, {}},   {{4097}, {4097}},
      {{127, 127}, {127, 127}}, {{0, 3}, {3}}, {{2, 3, 4}, {3, 1}}, {{}, {}},       {{5, 1, 3}, {4, 1}}};
  return p;
}
const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided,
                                        Layout::kFlipped,    Layout::kPadded,     Layout::kBroadcast};
  return l;
}

OpCase binary_case(const BinarySpec& spec, DType ta, DType tb, DType out, int variant) {
  const ShapePair sp = shape_pairs()[variant % shape_pairs().size()];
  const Layout la = effective_layout(sp.a, layouts()[(variant / 3 + variant) % layouts().size()]);
  Domain da = spec.a, db = spec.b;
  if (ta == DType::kU8) da.lo = std::max(da.lo, 0.0);
  if (tb == DType::kU8) db.lo = std::max(db.lo, 0.0);
  std::string name = join_name({spec.name, dname(ta), ta == tb ? "" : dname(tb), shape_name(sp.a), shape_name(sp.b),
                                layout_name(la)});
  const DType compute = spec.returns_bool ? tensor::promote_types(ta, tb) : out;
  return {sanitize(name), {ta, tb, out}, [=](const std::string& device) {
            Rng rng(name);
            Input a = make_input(rng, sp.a, ta, device, la, da);
            Input b = make_input(rng, sp.b, tb, device, Layout::kContiguous, db);
            // Integer results wrap to the compute dtype before comparisons see them.
            Ref expected = wrap_to(ref::zip(a.r, b.r, spec.ref), compute);
            EXPECT_TRUE(matches(spec.op(a.t, b.t), expected, out, tol_for(out, spec.tol_scale))) << name;
          }};
}

}  // namespace

std::vector<OpCase> binary_cases() {
  std::vector<OpCase> cases;
  int variant = 0;
  for (const auto& spec : float_specs()) {
    for (DType t : float_dtypes()) cases.push_back(binary_case(spec, t, t, spec.returns_bool ? DType::kBool : t, variant++));
  }
  for (const auto& spec : int_specs()) {
    for (DType t : int_dtypes()) {
      const std::string n = spec.name;
      if (t == DType::kU8 && n == "pow") continue;
      cases.push_back(binary_case(spec, t, t, spec.returns_bool ? DType::kBool : t, variant++));
    }
  }
  // Integer true division gives f32.
  BinarySpec div_int{"div", [](auto& a, auto& b) { return a / b; }, [](double a, double b) { return a / b; }, {-20, 20}, {1, 7}};
  for (DType t : {DType::kI32, DType::kU8, DType::kI64}) cases.push_back(binary_case(div_int, t, t, DType::kF32, variant++));
  // Mod with negative divisors (Python semantics).
  BinarySpec mod_neg{"mod_negdiv", [](auto& a, auto& b) { return a.mod(b); }, py_mod, {-30, 30}, {-7, -1}};
  for (DType t : {DType::kI32, DType::kI8, DType::kF32, DType::kF64}) cases.push_back(binary_case(mod_neg, t, t, t, variant++));
  // Logical ops and bool arithmetic.
  const std::vector<BinarySpec> logical = {
      {"logical_and", [](auto& a, auto& b) { return a.logical_and(b); }, [](double a, double b) { return double(a != 0 && b != 0); }, {-1, 1, true}, {-1, 1, true}, true},
      {"logical_or", [](auto& a, auto& b) { return a.logical_or(b); }, [](double a, double b) { return double(a != 0 || b != 0); }, {-1, 1, true}, {-1, 1, true}, true},
      {"logical_xor", [](auto& a, auto& b) { return a.logical_xor(b); }, [](double a, double b) { return double((a != 0) != (b != 0)); }, {-1, 1, true}, {-1, 1, true}, true},
  };
  for (const auto& spec : logical) {
    for (DType t : {DType::kBool, DType::kF32, DType::kI16}) cases.push_back(binary_case(spec, t, t, DType::kBool, variant++));
  }
  const std::vector<BinarySpec> bool_ops = {
      {"add", [](auto& a, auto& b) { return a + b; }, [](double a, double b) { return a + b; }, {0, 1}, {0, 1}},
      {"mul", [](auto& a, auto& b) { return a * b; }, [](double a, double b) { return a * b; }, {0, 1}, {0, 1}},
      {"bitwise_xor", [](auto& a, auto& b) { return a.bitwise_xor(b); }, [](double a, double b) { return double(int(a) ^ int(b)); }, {0, 1}, {0, 1}},
      {"eq", [](auto& a, auto& b) { return a.eq(b); }, [](double a, double b) { return double(a == b); }, {0, 1}, {0, 1}, true},
  };
  for (const auto& spec : bool_ops) cases.push_back(binary_case(spec, DType::kBool, DType::kBool, DType::kBool, variant++));
  // Promotion between dtypes.
  const BinarySpec add{"add", [](auto& a, auto& b) { return a + b; }, [](double a, double b) { return a + b; }, {-20, 20, true}, {-20, 20, true}};
  const BinarySpec mul{"mul", [](auto& a, auto& b) { return a * b; }, [](double a, double b) { return a * b; }, {-9, 9, true}, {-9, 9, true}};
  const std::vector<std::tuple<DType, DType, DType>> promotions = {
      {DType::kI32, DType::kF16, DType::kF16},  {DType::kU8, DType::kI8, DType::kI16},   {DType::kBool, DType::kI32, DType::kI32},
      {DType::kF16, DType::kBF16, DType::kF32}, {DType::kI64, DType::kF32, DType::kF32}, {DType::kBF16, DType::kF64, DType::kF64},
      {DType::kU8, DType::kI32, DType::kI32},   {DType::kI8, DType::kI64, DType::kI64},  {DType::kF32, DType::kF64, DType::kF64},
      {DType::kBool, DType::kBF16, DType::kBF16}, {DType::kU8, DType::kF16, DType::kF16}, {DType::kI16, DType::kI32, DType::kI32}};
  for (auto [a, b, out] : promotions) {
    cases.push_back(binary_case(add, a, b, out, variant++));
    cases.push_back(binary_case(mul, b, a, out, variant++));
  }
  // Weak scalars take the tensor's dtype unless they rank above it.
  struct ScalarCase {
    const char* name;
    DType t;
    std::function<Tensor(const Tensor&)> op;
    std::function<double(double)> ref;
    DType out;
  };
  const std::vector<ScalarCase> scalars = {
      {"add_int_scalar_f16", DType::kF16, [](const Tensor& x) { return x + 3; }, [](double x) { return x + 3; }, DType::kF16},
      {"mul_float_scalar_i32", DType::kI32, [](const Tensor& x) { return x * 2.5; }, [](double x) { return x * 2.5; }, DType::kF32},
      {"add_int_scalar_bool", DType::kBool, [](const Tensor& x) { return x + 2; }, [](double x) { return x + 2; }, DType::kI64},
      {"sub_scalar_left_f32", DType::kF32, [](const Tensor& x) { return 1.5 - x; }, [](double x) { return 1.5 - x; }, DType::kF32},
      {"div_scalar_left_i16", DType::kI16, [](const Tensor& x) { return 10 / x.add(100); }, [](double x) { return 10 / (x + 100); }, DType::kF32},
      {"pow_scalar_bf16", DType::kBF16, [](const Tensor& x) { return x.abs().pow(2); }, [](double x) { return x * x; }, DType::kBF16},
      {"maximum_scalar_u8", DType::kU8, [](const Tensor& x) { return x.maximum(5); }, [](double x) { return std::max(x, 5.0); }, DType::kU8},
      {"lt_scalar_f64", DType::kF64, [](const Tensor& x) { return x.lt(0.25); }, [](double x) { return double(x < 0.25); }, DType::kBool},
      {"shl_scalar_i64", DType::kI64, [](const Tensor& x) { return x.shl(3); }, [](double x) { return x * 8; }, DType::kI64},
      {"mod_scalar_i8", DType::kI8, [](const Tensor& x) { return x.mod(4); }, [](double x) { return py_mod(x, 4); }, DType::kI8},
      {"where_scalar_f32", DType::kF32, [](const Tensor& x) { return Tensor::where(x.gt(0), x, 0.5); }, [](double x) { return x > 0 ? x : 0.5; }, DType::kF32},
  };
  for (const auto& sc : scalars) {
    cases.push_back({sc.name, {sc.t, sc.out}, [sc](const std::string& device) {
                       Rng rng(sc.name);
                       Input x = make_input(rng, {13, 17}, sc.t, device, Layout::kTransposed,
                                            sc.t == DType::kU8 || sc.t == DType::kBool ? Domain{0, 9, true} : Domain{-9, 9, true});
                       EXPECT_TRUE(matches(sc.op(x.t), wrap_to(ref::map(x.r, sc.ref), sc.out), sc.out, tol_for(sc.out)));
                     }});
  }
  // where over three broadcast operands with a non-bool condition.
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kBool}) {
    const std::string name = join_name({"where", dname(t), "broadcast"});
    cases.push_back({name, {t, DType::kI8}, [t, name](const std::string& device) {
                       Rng rng(name);
                       Input c = make_input(rng, {13, 1}, DType::kI8, device, Layout::kContiguous, {-1, 1, true});
                       Input a = make_input(rng, {17}, t, device, Layout::kFlipped, {-5, 5, true});
                       Input b = make_input(rng, {1, 17}, t, device, Layout::kContiguous, {-5, 5, true});
                       EXPECT_TRUE(matches(Tensor::where(c.t, a.t, b.t), ref::where(c.r, a.r, b.r), t, tol_for(t)));
                     }});
  }
  return cases;
}

TEST_P(BinaryOps, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BinaryOps);

}  // namespace nvhcq::optest
