// gather, scatter_add, index_select, masked_fill, embedding, one_hot.
#include "ops/op_cases.h"
#include "tensor/nn.h"

namespace nvhcq::optest {
namespace {

// Random indices in [0, bound) of an integer dtype.
Input indices(Rng& rng, const Shape& shape, int64_t bound, DType t, const std::string& device, Layout layout = Layout::kContiguous) {
  return make_input(rng, shape, t, device, layout, {0, static_cast<double>(bound - 1), true});
}

}  // namespace

std::vector<OpCase> indexing_cases() {
  std::vector<OpCase> cases;
  const std::vector<std::tuple<DType, DType, Layout>> combos = {
      {DType::kF32, DType::kI64, Layout::kContiguous}, {DType::kF16, DType::kI32, Layout::kTransposed},
      {DType::kI32, DType::kI64, Layout::kFlipped},    {DType::kBF16, DType::kI16, Layout::kStrided},
      {DType::kF64, DType::kU8, Layout::kPadded},      {DType::kBool, DType::kI64, Layout::kContiguous},
      {DType::kI8, DType::kI32, Layout::kBroadcast}};
  for (auto [t, it, layout] : combos) {
    for (int axis : {0, 1}) {
      const std::string name = join_name({"gather", dname(t), dname(it), "axis" + std::to_string(axis), layout_name(layout)});
      cases.push_back({name, {t, it}, [=](const std::string& device) {
                         Rng rng(name);
                         Input x = make_input(rng, {13, 17}, t, device, layout, {-20, 20});
                         const Shape is = axis == 0 ? Shape{9, 17} : Shape{13, 5};
                         Input idx = indices(rng, is, x.r.shape[axis], it, device);
                         Ref expected = ref::gather_index(is, x.r, [&](std::vector<int64_t> i) {
                           std::vector<int64_t> at = i;
                           at[axis] = static_cast<int64_t>(idx.r.at(i));
                           return at;
                         });
                         EXPECT_TRUE(matches(x.t.gather(axis, idx.t), expected, t, tol_for(t)));
                       }});
    }
  }
  for (DType t : {DType::kF32, DType::kI32, DType::kF64, DType::kF16, DType::kI64}) {
    for (int axis : {0, 1}) {
      const std::string name = join_name({"scatter_add", dname(t), "axis" + std::to_string(axis)});
      cases.push_back({name, {t, DType::kI64}, [=](const std::string& device) {
                         Rng rng(name);
                         Input x = make_input(rng, {6, 7}, t, device, Layout::kTransposed, {-5, 5, true});
                         Input src = make_input(rng, {10, 9}, t, device, Layout::kFlipped, {-5, 5, true});
                         const Shape is = axis == 0 ? Shape{10, 7} : Shape{6, 9};
                         // Few distinct targets: duplicates must accumulate.
                         Input idx = indices(rng, is, axis == 0 ? 6 : 7, DType::kI64, device);
                         Ref expected = x.r;
                         for (int64_t i = 0; i < ref::count(is); ++i) {
                           auto p = Ref::filled(is, 0).index_of(i);
                           auto at = p;
                           at[axis] = static_cast<int64_t>(idx.r.at(p));
                           expected.at(at) += src.r.at(p);
                         }
                         EXPECT_TRUE(matches(x.t.scatter_add(axis, idx.t, src.t), expected, t, tol_for(t)));
                       }});
    }
  }
  for (auto [t, it, layout] : combos) {
    const std::string name = join_name({"index_select", dname(t), dname(it), layout_name(layout)});
    cases.push_back({name, {t, it}, [=](const std::string& device) {
                       Rng rng(name);
                       Input x = make_input(rng, {7, 127}, t, device, layout, {-20, 20});
                       Input idx = indices(rng, {11}, 127, it, device);
                       Ref expected = ref::gather_index({7, 11}, x.r, [&](std::vector<int64_t> i) {
                         return std::vector<int64_t>{i[0], static_cast<int64_t>(idx.r.v[i[1]])};
                       });
                       EXPECT_TRUE(matches(x.t.index_select(1, idx.t), expected, t, tol_for(t)));
                     }});
  }
  for (DType t : {DType::kF32, DType::kI16, DType::kBF16, DType::kBool}) {
    const std::string name = join_name({"masked_fill", dname(t)});
    cases.push_back({name, {t}, [=](const std::string& device) {
                       Rng rng(name);
                       Input x = make_input(rng, {13, 17}, t, device, Layout::kStrided, {-9, 9, true});
                       Input m = make_input(rng, {13, 1}, DType::kBool, device);
                       const double fill = t == DType::kBool ? 1 : -7;
                       Ref expected = ref::where(m.r, Ref({}, {fill}), x.r);
                       EXPECT_TRUE(matches(x.t.masked_fill(m.t, fill), expected, t, tol_for(t)));
                     }});
  }
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::string name = join_name({"embedding", dname(t)});
    cases.push_back({name, {t, DType::kI32}, [=](const std::string& device) {
                       Rng rng(name);
                       Input w = make_input(rng, {50, 8}, t, device);
                       Input ids = indices(rng, {3, 5}, 50, DType::kI32, device);
                       Ref expected = ref::gather_index({3, 5, 8}, w.r, [&](std::vector<int64_t> i) {
                         return std::vector<int64_t>{static_cast<int64_t>(ids.r.at({i[0], i[1]})), i[2]};
                       });
                       EXPECT_TRUE(matches(tensor::nn::embedding(ids.t, w.t), expected, t, tol_for(t)));
                     }});
  }
  for (DType it : {DType::kI64, DType::kU8}) {
    const std::string name = join_name({"one_hot", dname(it)});
    cases.push_back({name, {it}, [=](const std::string& device) {
                       Rng rng(name);
                       Input c = indices(rng, {4, 3}, 6, it, device);
                       Ref expected = ref::gather_index({4, 3, 6}, c.r, [](auto i) { return std::vector<int64_t>{i[0], i[1]}; });
                       for (int64_t i = 0; i < expected.numel(); ++i) expected.v[i] = expected.v[i] == double(expected.index_of(i)[2]);
                       EXPECT_TRUE(matches(tensor::nn::one_hot(c.t, 6), expected, DType::kI64, {}));
                     }});
  }
  return cases;
}

TEST_P(Indexing, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Indexing);

}  // namespace nvhcq::optest
