// Creation (constants, ranges, eye, Philox random draws), uploads and casts
// between every pair of dtypes.
#include <cmath>

#include "ops/op_cases.h"

namespace nvhcq::optest {
namespace {

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {DType::kBool, DType::kU8,  DType::kI8,   DType::kI16, DType::kI32,
                                       DType::kI64,  DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  return v;
}

// What a cast from a value exactly representable in `from` gives in `to`:
// float -> integer truncates and saturates, integer -> integer wraps, -> bool is != 0.
double cast_ref(double x, DType from, DType to) {
  if (to == DType::kBool) return x != 0 ? 1 : 0;
  if (tensor::is_float(to)) return representable(x, to);
  if (tensor::is_float(from)) {
    const int bits = static_cast<int>(tensor::dtype_size(to)) * 8;
    double t = std::trunc(x);
    const double lo = to == DType::kU8 ? 0 : -std::ldexp(1.0, bits - 1);
    const double hi = to == DType::kU8 ? 255 : std::ldexp(1.0, bits - 1) - 1;
    return std::min(std::max(t, lo), hi);
  }
  return wrap_to(x, to);
}

}  // namespace

std::vector<OpCase> creation_cases() {
  std::vector<OpCase> cases;
  // Every cast pair, on a strided view.
  for (DType from : all_dtypes()) {
    for (DType to : all_dtypes()) {
      const std::string name = join_name({"cast", dname(from), "to", dname(to)});
      cases.push_back({name, {from, to}, [from, to, name](const std::string& device) {
                         Rng rng(name);
                         Domain dom = tensor::is_float(from) ? Domain{-300.75, 300.75} : Domain{-300, 300, true};
                         if (from == DType::kI8) dom = {-128, 127, true};
                         if (from == DType::kU8) dom = {0, 255, true};
                         Input x = make_input(rng, {13, 17}, from, device, Layout::kStrided, dom);
                         auto cast = [from, to](double v) { return cast_ref(v, from, to); };
                         EXPECT_TRUE(matches(x.t.cast(to), ref::map(x.r, cast), to, tol_for(to))) << name;
                         Ref with_zero = x.r;  // make sure zero -> false / 0 is exercised
                         with_zero.v[0] = 0;
                         EXPECT_TRUE(matches(upload(with_zero, from, device).cast(to), ref::map(with_zero, cast), to, tol_for(to)));
                       }});
    }
  }
  for (DType t : {DType::kF32, DType::kI32, DType::kBool, DType::kBF16, DType::kU8}) {
    const std::string name = join_name({"zeros_ones_full", dname(t)});
    cases.push_back({name, {t}, [t](const std::string& device) {
                       EXPECT_TRUE(matches(Tensor::zeros({3, 4}, t, device), Ref::filled({3, 4}, 0), t, {}));
                       EXPECT_TRUE(matches(Tensor::ones({5}, t, device), Ref::filled({5}, 1), t, {}));
                       EXPECT_TRUE(matches(Tensor::full({2, 0, 3}, 7, t, device), Ref::filled({2, 0, 3}, 0), t, {}));
                       EXPECT_TRUE(matches(Tensor::full({}, 1, t, device), Ref({}, {1.0}), t, {}));
                       Tensor z = Tensor::ones({4, 1}, t, device).zeros_like();
                       EXPECT_TRUE(matches(z, Ref::filled({4, 1}, 0), t, {}));
                     }});
  }
  cases.push_back({"arange_int_and_float", {DType::kI64, DType::kF32}, [](const std::string& device) {
                     EXPECT_TRUE(matches(Tensor::arange(int64_t{7}, DType::kI64, device), Ref({7}, {0, 1, 2, 3, 4, 5, 6}), DType::kI64, {}));
                     EXPECT_TRUE(matches(Tensor::arange(10, 1, -3, std::nullopt, device), Ref({3}, {10, 7, 4}), DType::kI64, {}));
                     EXPECT_TRUE(matches(Tensor::arange(-1.0, 1.0, 0.5, std::nullopt, device), Ref({4}, {-1, -0.5, 0, 0.5}), DType::kF32, {}));
                     EXPECT_TRUE(matches(Tensor::arange(5, 5, 1, std::nullopt, device), Ref({0}, {}), DType::kI64, {}));
                     Tensor big = Tensor::arange(0, 4097, 1, DType::kF32, device);
                     std::vector<double> v(4097);
                     for (int i = 0; i < 4097; ++i) v[i] = i;
                     EXPECT_TRUE(matches(big, Ref({4097}, v), DType::kF32, {}));
                   }});
  cases.push_back({"linspace_eye", {DType::kF32, DType::kF64}, [](const std::string& device) {
                     EXPECT_TRUE(matches(Tensor::linspace(0, 1, 5, DType::kF64, device), Ref({5}, {0, 0.25, 0.5, 0.75, 1}), DType::kF64, tol_for(DType::kF64)));
                     EXPECT_TRUE(matches(Tensor::linspace(-3, 3, 1, DType::kF32, device), Ref({1}, {-3}), DType::kF32, {}));
                     Tensor e = Tensor::eye(3, 4, DType::kI32, device);
                     EXPECT_TRUE(matches(e, Ref({3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}), DType::kI32, {}));
                   }});
  // Random draws: range, moments, determinism, and the same numbers as the CPU.
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    const std::string name = join_name({"rand_randn", dname(t)});
    cases.push_back({name, {t}, [t](const std::string& device) {
                       Tensor u = Tensor::rand({4097}, 1234, t, device);
                       std::vector<double> v = u.to_vector<double>();
                       double mean = 0;
                       for (double x : v) {
                         ASSERT_GE(x, 0.0);
                         ASSERT_LT(x, 1.0);
                         mean += x / 4097;
                       }
                       EXPECT_NEAR(mean, 0.5, 0.03);
                       EXPECT_EQ(v, Tensor::rand({4097}, 1234, t, device).to_vector<double>());
                       EXPECT_NE(v, Tensor::rand({4097}, 1235, t, device).to_vector<double>());
                       EXPECT_EQ(v, Tensor::rand({4097}, 1234, t, "cpu").to_vector<double>());
                       Tensor n = Tensor::randn({64, 64}, 99, t, device);
                       std::vector<double> w = n.to_vector<double>();
                       double m = 0, s = 0;
                       for (double x : w) m += x / w.size();
                       for (double x : w) s += (x - m) * (x - m) / w.size();
                       EXPECT_NEAR(m, 0.0, 0.06);
                       EXPECT_NEAR(std::sqrt(s), 1.0, 0.06);
                       EXPECT_EQ(w, Tensor::randn({64, 64}, 99, t, "cpu").to_vector<double>());
                     }});
  }
  for (DType t : {DType::kI64, DType::kI32, DType::kU8}) {
    const std::string name = join_name({"randint", dname(t)});
    cases.push_back({name, {t}, [t](const std::string& device) {
                       Tensor r = Tensor::randint(-3, 5, {1023}, 7, t == DType::kU8 ? DType::kI32 : t, device);
                       std::vector<int64_t> v = r.to_vector<int64_t>();
                       std::vector<int> seen(8, 0);
                       for (int64_t x : v) {
                         ASSERT_GE(x, -3);
                         ASSERT_LT(x, 5);
                         seen[x + 3]++;
                       }
                       for (int c : seen) EXPECT_GT(c, 60);  // every value drawn
                       if (t == DType::kU8) {
                         std::vector<int64_t> u = Tensor::randint(0, 256, {512}, 8, t, device).to_vector<int64_t>();
                         EXPECT_GT(*std::max_element(u.begin(), u.end()), 200);
                       }
                       EXPECT_EQ(v, Tensor::randint(-3, 5, {1023}, 7, r.dtype(), "cpu").to_vector<int64_t>());
                     }});
  }
  // Uploads and round trips of every dtype, including 0-d and empty tensors.
  for (DType t : all_dtypes()) {
    const std::string name = join_name({"upload_roundtrip", dname(t)});
    cases.push_back({name, {t}, [t, name](const std::string& device) {
                       Rng rng(name);
                       Input x = make_input(rng, {1023}, t, device, Layout::kContiguous, {-100, 100});
                       EXPECT_TRUE(matches(x.t, x.r, t, {}));
                       std::vector<uint8_t> bytes = x.t.to_bytes();
                       ASSERT_EQ(bytes.size(), 1023 * tensor::dtype_size(t));
                       Tensor back = Tensor::from_data(bytes.data(), t, {1023}, device);
                       EXPECT_TRUE(matches(back, x.r, t, {}));
                       EXPECT_TRUE(matches(x.t.to("cpu"), x.r, t, {}));
                       Tensor s = Tensor::scalar(1, t, device);
                       EXPECT_TRUE(matches(s, Ref({}, {1.0}), t, {}));
                       EXPECT_EQ(Tensor::zeros({0}, t, device).to_vector<double>().size(), 0u);
                     }});
  }
  return cases;
}

TEST_P(Creation, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Creation);

}  // namespace nvhcq::optest
