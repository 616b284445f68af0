// EdgeTensors: the tensor API at its edges, for every dtype: tensors with no
// elements and with one, shapes that are not powers of two (elementwise,
// reductions over odd axes, matmuls from 1x1x1 to 257x129x65), and every cast
// between the ten dtypes against the documented rules (float -> int truncates
// and saturates, int -> int wraps, -> bool is != 0, -> float rounds to nearest even).

#include <cmath>
#include <limits>

#include "ops/robust_op_cases.h"

namespace nvhcq::optest {
namespace {

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {DType::kBool, DType::kU8,  DType::kI8,  DType::kI16,
                                       DType::kI32,  DType::kI64, DType::kF16, DType::kBF16,
                                       DType::kF32,  DType::kF64};
  return v;
}

// The dtype sum() gives: i64 for integers and bools, the same float otherwise.
DType sum_dtype(DType t) {
  return tensor::is_float(t) ? t : DType::kI64;
}

Tol exact() {
  return Tol{0, 0};
}

void empty_tensors(DType t, const std::string& device) {
  Tensor e = Tensor::zeros({3, 0}, t, device);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<double>().empty());
  EXPECT_TRUE(
      matches(e + e, Ref({3, 0}, {}), e.dtype() == DType::kBool ? DType::kBool : t, exact()));
  EXPECT_TRUE(matches(e.sum(), Ref({}, {0}), sum_dtype(t), exact())) << "the sum of nothing is 0";
  EXPECT_TRUE(matches(e.sum({1}), Ref({3}, {0, 0, 0}), sum_dtype(t), exact()));
  EXPECT_TRUE(matches(e.sum({0}), Ref({0}, {}), sum_dtype(t), exact()));
  EXPECT_TRUE(matches(e.reshape({0, 7}), Ref({0, 7}, {}), t, exact()));
  Tensor ones = Tensor::ones({3, 2}, t, device);
  EXPECT_TRUE(matches(Tensor::cat({e, ones}, 1), Ref::filled({3, 2}, 1), t, exact()));
  if (t != DType::kBool) {
    Tensor a = Tensor::zeros({2, 0}, t, device), b = Tensor::zeros({0, 3}, t, device);
    EXPECT_TRUE(matches(a.matmul(b), Ref::filled({2, 3}, 0), t, exact())) << "k = 0: zeros";
    EXPECT_TRUE(matches(Tensor::zeros({0, 4}, t, device).matmul(Tensor::ones({4, 5}, t, device)),
                        Ref({0, 5}, {}), t, exact()));
  }
}

void one_element_tensors(DType t, const std::string& device) {
  const double v = t == DType::kBool ? 1 : 3;
  for (const Shape& s : {Shape{}, Shape{1}, Shape{1, 1, 1}}) {
    Tensor x = Tensor::from_vector<double>({v}, s, t, device);
    EXPECT_EQ(x.numel(), 1);
    EXPECT_EQ(x.item<double>(), v);
    EXPECT_TRUE(matches(x.sum(), Ref({}, {v}), sum_dtype(t), exact()));
    if (t != DType::kBool) {
      EXPECT_TRUE(matches(x + x, Ref(s, {wrap_to(2 * v, t)}), t, exact()));
      EXPECT_TRUE(matches(x * x, Ref(s, {wrap_to(v * v, t)}), t, exact()));
    }
  }
  if (t == DType::kBool) return;
  // Broadcast against 5 elements, and a 1x1 @ 1x1 matmul.
  Tensor one = Tensor::from_vector<double>({v}, {1}, t, device);
  Tensor five = Tensor::from_vector<double>({0, 1, 2, 3, 4}, {5}, t, device);
  EXPECT_TRUE(matches(one + five, Ref({5}, {v, v + 1, v + 2, v + 3, v + 4}), t, exact()));
  Tensor m = Tensor::from_vector<double>({v}, {1, 1}, t, device);
  EXPECT_TRUE(matches(m.matmul(m), Ref({1, 1}, {wrap_to(v * v, t)}), t, exact()));
}

void odd_shape_elementwise(DType t, const std::string& device) {
  for (const Shape& s : {Shape{3, 5, 7}, Shape{17, 31}, Shape{127, 129}, Shape{1, 100003}}) {
    Rng rng(join_name({"odd", shape_name(s), dname(t)}));
    const Domain dom = tensor::is_float(t) ? Domain{-2, 2} : Domain{0, 9, true};
    Input a = make_input(rng, s, t, device, Layout::kContiguous, dom);
    Input b = make_input(rng, s, t, device, Layout::kTransposed, dom);
    Ref expected = ref::zip(a.r, b.r, [t](double p, double q) {
      double r = p + 2 * q;
      return tensor::is_float(t) ? r : wrap_to(r, t);
    });
    // a + 2b is exact in every float dtype only up to its rounding: one rounding step.
    EXPECT_TRUE(matches(a.t + b.t * 2, expected, t, tol_for(t, 2))) << shape_name(s);
    const int last = static_cast<int>(s.size()) - 1;
    Ref sums = ref::reduce(a.r, {last}, false, ref::fsum);
    Tol tol = tol_for(sum_dtype(t), std::sqrt(static_cast<double>(s.back())));
    tol.atol *= 4;
    EXPECT_TRUE(matches(a.t.sum({last}), sums, sum_dtype(t), tol)) << shape_name(s) << " row sums";
  }
}

// Sums along rows whose lengths are not multiples of the CPU kernels' 8- and
// 16-element lanes (GCC 12 once got 24..31-element rows of 1- and 2-byte
// integers wrong), in every dtype.
void odd_length_sums(DType t, const std::string& device) {
  for (int64_t n : {1, 7, 15, 24, 25, 31, 33, 47, 100, 1001}) {
    Rng rng(join_name({"sums", std::to_string(n), dname(t)}));
    const Domain dom = tensor::is_float(t) ? Domain{-2, 2} : Domain{0, 9, true};
    Input a = make_input(rng, {3, n}, t, device, Layout::kContiguous, dom);
    Tol tol = tol_for(sum_dtype(t), std::sqrt(static_cast<double>(n)));
    tol.atol *= 4;
    EXPECT_TRUE(matches(a.t.sum({1}), ref::reduce(a.r, {1}, false, ref::fsum), sum_dtype(t), tol))
        << "rows of " << n;
    EXPECT_TRUE(matches(a.t.max({1}), ref::reduce(a.r, {1}, false, ref::fmax), t, exact()))
        << "rows of " << n;
  }
}

void odd_shape_matmuls(DType t, const std::string& device) {
  struct Mkn {
    int64_t m, k, n;
  };
  for (const Mkn& d : {Mkn{1, 1, 1}, Mkn{3, 5, 7}, Mkn{17, 31, 13}, Mkn{1, 300, 1}, Mkn{257, 1, 3},
                       Mkn{127, 129, 65}, Mkn{65, 257, 33}}) {
    const std::string name =
        join_name({"mm", std::to_string(d.m), std::to_string(d.k), std::to_string(d.n), dname(t)});
    Rng rng(name);
    const Domain dom = tensor::is_float(t) ? Domain{-1, 1} : Domain{-3, 3, true};
    Input a = make_input(rng, {d.m, d.k}, t, device, Layout::kContiguous, dom);
    Input b = make_input(rng, {d.k, d.n}, t, device, Layout::kContiguous, dom);
    Ref expected = wrap_to(ref::matmul(a.r, b.r), t);
    Tol tol = tol_for(t, 2);
    tol.atol += tol.rtol * std::sqrt(static_cast<double>(d.k)) * 2;
    EXPECT_TRUE(matches(a.t.matmul(b.t), expected, t, tol)) << name;
  }
  // A batch of odd matmuls broadcasting a 3-D operand against a 2-D one.
  Rng rng(join_name({"mm_batch", dname(t)}));
  const Domain dom = tensor::is_float(t) ? Domain{-1, 1} : Domain{-3, 3, true};
  Input a = make_input(rng, {3, 7, 9}, t, device, Layout::kContiguous, dom);
  Input b = make_input(rng, {9, 11}, t, device, Layout::kContiguous, dom);
  Tol tol = tol_for(t, 2);
  tol.atol += tol.rtol * 6;
  EXPECT_TRUE(matches(a.t.matmul(b.t), wrap_to(ref::matmul(a.r, b.r), t), t, tol));
}

// ---- casts -------------------------------------------------------------------

double int_min(DType t) {
  switch (t) {
    case DType::kU8:
      return 0;
    case DType::kI8:
      return -128;
    case DType::kI16:
      return -32768;
    case DType::kI32:
      return -2147483648.0;
    default:
      return -9223372036854775808.0;
  }
}
double int_max(DType t) {
  switch (t) {
    case DType::kU8:
      return 255;
    case DType::kI8:
      return 127;
    case DType::kI16:
      return 32767;
    case DType::kI32:
      return 2147483647.0;
    default:
      return 9223372036854775807.0;
  }
}

// Source values: edge values of the source dtype, exactly representable in it.
std::vector<double> cast_sources(DType from) {
  switch (from) {
    case DType::kBool:
      return {0, 1, 1, 0};
    case DType::kU8:
      return {0, 1, 127, 128, 200, 255};
    case DType::kI8:
      return {-128, -1, 0, 1, 100, 127};
    case DType::kI16:
      return {-32768, -300, -1, 0, 300, 32767};
    case DType::kI32:
      return {-2147483648.0, -70000, -1, 0, 70000, 2147483647.0};
    case DType::kI64:
      return {-1099511627776.0, -1, 0, 1, 1099511627776.0, 4611686018427387904.0};
    default: {
      // 70000 is past f16's largest finite value (65504): f16 gets that instead.
      std::vector<double> v = {0,    1,    -1,  2.5,     -2.5,
                               0.75, 127,  128, -129,    255.5,
                               256,  -300, 300, 1000.25, from == DType::kF16 ? 65504.0 : 70000.0};
      for (double& x : v) x = representable(x, from);
      return v;
    }
  }
}

double cast_ref(double v, DType from, DType to) {
  if (to == DType::kBool) return v != 0 ? 1 : 0;
  if (tensor::is_float(to)) {
    double r = representable(v, to);
    if (to == DType::kF16 && std::fabs(r) > 65504) return std::copysign(INFINITY, v);
    return r;
  }
  if (tensor::is_float(from)) {  // truncate toward zero, then saturate
    double x = std::trunc(v);
    return std::min(std::max(x, int_min(to)), int_max(to));
  }
  return wrap_to(v, to);
}

void casts_from(DType from, const std::vector<DType>& targets, const std::string& device) {
  const std::vector<double> values = cast_sources(from);
  Tensor x =
      Tensor::from_vector<double>(values, {static_cast<int64_t>(values.size())}, from, device);
  for (DType to : targets) {
    std::vector<double> want;
    for (double v : values) want.push_back(cast_ref(v, from, to));
    EXPECT_TRUE(matches(x.cast(to), Ref({static_cast<int64_t>(values.size())}, want), to, exact()))
        << dname(from) << " -> " << dname(to);
  }
}

}  // namespace

std::vector<OpCase> edge_tensor_cases() {
  std::vector<OpCase> cases;
  for (DType t : all_dtypes()) {
    cases.push_back(
        {join_name({"empty", dname(t)}), {t}, [t](const std::string& d) { empty_tensors(t, d); }});
    cases.push_back({join_name({"one_element", dname(t)}), {t}, [t](const std::string& d) {
                       one_element_tensors(t, d);
                     }});
    cases.push_back({join_name({"odd_length_sums", dname(t)}), {t}, [t](const std::string& d) {
                       odd_length_sums(t, d);
                     }});
  }
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kU8, DType::kF64}) {
    cases.push_back({join_name({"odd_shapes_elementwise", dname(t)}),
                     {t},
                     [t](const std::string& d) { odd_shape_elementwise(t, d); }});
  }
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kF64}) {
    cases.push_back({join_name({"odd_shapes_matmul", dname(t)}), {t}, [t](const std::string& d) {
                       odd_shape_matmuls(t, d);
                     }});
  }
  // Casts to every dtype but f64 (which a GPU backend may lack), and to f64 apart.
  for (DType from : all_dtypes()) {
    if (from == DType::kF64) continue;
    std::vector<DType> targets;
    for (DType to : all_dtypes()) {
      if (to != DType::kF64) targets.push_back(to);
    }
    cases.push_back({join_name({"cast_from", dname(from)}),
                     {from},
                     [from, targets](const std::string& d) { casts_from(from, targets, d); }});
    cases.push_back({join_name({"cast_to_f64_from", dname(from)}),
                     {from, DType::kF64},
                     [from](const std::string& d) { casts_from(from, {DType::kF64}, d); }});
  }
  cases.push_back({"cast_from_f64", {DType::kF64}, [](const std::string& d) {
                     casts_from(DType::kF64, all_dtypes(), d);
                   }});
  return cases;
}

TEST_P(EdgeTensors, MatchesTheRules) {
  run_case();
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EdgeTensors);

}  // namespace nvhcq::optest
