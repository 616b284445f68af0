// Movement ops: reshape, permute, expand, slicing with steps, padding, flips,
// concatenation, splitting, repeats and chains of views, over several dtypes.
#include "ops/op_cases.h"

namespace nvhcq::optest {
namespace {

const std::vector<DType>& movement_dtypes() {
  static const std::vector<DType> v = {DType::kF32, DType::kF16, DType::kI32, DType::kBool, DType::kF64, DType::kBF16,
                                       DType::kU8,  DType::kI64};
  return v;
}

// A case: an op on one input of `shape` (given layout) and its reference.
struct MoveSpec {
  std::string name;
  Shape shape;
  Layout layout;
  std::function<Tensor(const Tensor&)> op;
  std::function<Ref(const Ref&)> ref;
};

OpCase move_case(const MoveSpec& s, DType t) {
  const std::string name = sanitize(join_name({s.name, dname(t), layout_name(effective_layout(s.shape, s.layout))}));
  return {name, {t}, [s, t, name](const std::string& device) {
            Rng rng(name);
            Input x = make_input(rng, s.shape, t, device, s.layout, {-50, 50});
            EXPECT_TRUE(matches(s.op(x.t), wrap_to(s.ref(x.r), t), t, tol_for(t))) << name;
          }};
}

Ref slice_ref(const Ref& r, int axis, int64_t start, int64_t step, int64_t n) { return ref::slice(r, axis, start, step, n); }

}  // namespace

std::vector<OpCase> movement_cases() {
  using L = Layout;
  const std::vector<MoveSpec> specs = {
      {"reshape_13x17_to_17x13", {13, 17}, L::kTransposed, [](auto& x) { return x.reshape({17, 13}); }, [](auto& r) { return ref::reshape(r, {17, 13}); }},
      {"reshape_infer", {4097}, L::kFlipped, [](auto& x) { return x.reshape({17, -1}); }, [](auto& r) { return ref::reshape(r, {17, 241}); }},
      {"reshape_scalar", {}, L::kContiguous, [](auto& x) { return x.reshape({1, 1}); }, [](auto& r) { return ref::reshape(r, {1, 1}); }},
      {"reshape_padded", {5, 6}, L::kPadded, [](auto& x) { return x.reshape({3, 10}); }, [](auto& r) { return ref::reshape(r, {3, 10}); }},
      {"flatten", {2, 3, 4}, L::kTransposed, [](auto& x) { return x.flatten(1); }, [](auto& r) { return ref::reshape(r, {2, 12}); }},
      {"permute_3d", {2, 3, 4}, L::kStrided, [](auto& x) { return x.permute({2, 0, 1}); }, [](auto& r) { return ref::permute(r, {2, 0, 1}); }},
      {"transpose", {13, 17}, L::kContiguous, [](auto& x) { return x.transpose(0, 1).contiguous(); }, [](auto& r) { return ref::permute(r, {1, 0}); }},
      {"t_of_broadcast", {5, 7}, L::kBroadcast, [](auto& x) { return x.t(); }, [](auto& r) { return ref::permute(r, {1, 0}); }},
      {"expand", {3, 1, 5}, L::kContiguous, [](auto& x) { return x.expand({2, 3, 4, 5}); },
       [](auto& r) { return ref::gather_index({2, 3, 4, 5}, r, [](auto i) { return std::vector<int64_t>{i[1], 0, i[3]}; }); }},
      {"unsqueeze_squeeze", {7}, L::kStrided, [](auto& x) { return x.unsqueeze(0).unsqueeze(-1).squeeze(0); }, [](auto& r) { return ref::reshape(r, {7, 1}); }},
      {"slice_step2", {13, 17}, L::kContiguous, [](auto& x) { return x.slice(1, 1, std::nullopt, 2); }, [](auto& r) { return slice_ref(r, 1, 1, 2, 8); }},
      {"slice_step3_neg_start", {1023}, L::kFlipped, [](auto& x) { return x.slice(0, -100, -10, 3); }, [](auto& r) { return slice_ref(r, 0, 923, 3, 30); }},
      {"slice_negative_step", {13, 17}, L::kTransposed, [](auto& x) { return x.slice(0, std::nullopt, std::nullopt, -2); }, [](auto& r) { return slice_ref(r, 0, 12, -2, 7); }},
      {"slice_negative_step_bounds", {13, 17}, L::kStrided, [](auto& x) { return x.slice(1, 15, 2, -3); }, [](auto& r) { return slice_ref(r, 1, 15, -3, 5); }},
      {"slice_empty", {13, 17}, L::kContiguous, [](auto& x) { return x.slice(1, 10, 5); }, [](auto& r) { return slice_ref(r, 1, 10, 1, 0); }},
      {"select", {5, 6, 7}, L::kTransposed, [](auto& x) { return x.select(1, -2); },
       [](auto& r) { return ref::reshape(slice_ref(r, 1, 4, 1, 1), {5, 7}); }},
      {"flip_two_axes", {13, 17}, L::kStrided, [](auto& x) { return x.flip({0, 1}); }, [](auto& r) { return ref::flip(ref::flip(r, 0), 1); }},
      {"pad_constant", {13, 17}, L::kContiguous, [](auto& x) { return x.pad({{2, 1}, {0, 3}}, PadMode::kConstant, 5); },
       [](auto& r) { return ref::pad_constant(r, {{2, 1}, {0, 3}}, 5); }},
      {"pad_crop", {13, 17}, L::kTransposed, [](auto& x) { return x.pad({{-2, 1}, {3, -4}}); },
       [](auto& r) { return ref::pad_constant(slice_ref(slice_ref(r, 0, 2, 1, 11), 1, 0, 1, 13), {{0, 1}, {3, 0}}, 0); }},
      {"pad_reflect", {7, 9}, L::kFlipped, [](auto& x) { return x.pad({{2, 3}, {1, 0}}, PadMode::kReflect); },
       [](auto& r) { return ref::pad_reflect(r, {{2, 3}, {1, 0}}); }},
      {"pad_of_pad_same_value", {5, 6}, L::kContiguous, [](auto& x) { return x.pad({{1, 1}}).pad({{0, 0}, {2, 2}}); },
       [](auto& r) { return ref::pad_constant(r, {{1, 1}, {2, 2}}, 0); }},
      {"pad_of_pad_other_value", {5, 6}, L::kContiguous, [](auto& x) { return x.pad({{1, 1}}, PadMode::kConstant, 1).pad({{2, 0}}, PadMode::kConstant, 0); },
       [](auto& r) { return ref::pad_constant(ref::pad_constant(r, {{1, 1}}, 1), {{2, 0}}, 0); }},
      {"slice_of_padded", {9, 4}, L::kPadded, [](auto& x) { return x.slice(0, 8, 0, -3); }, [](auto& r) { return slice_ref(r, 0, 8, -3, 3); }},
      {"expand_of_padded", {5, 1}, L::kPadded, [](auto& x) { return x.expand({5, 6}); },
       [](auto& r) { return ref::gather_index({5, 6}, r, [](auto i) { return std::vector<int64_t>{i[0], 0}; }); }},
      {"chain_transpose_slice_flip", {13, 17}, L::kContiguous, [](auto& x) { return x.t().slice(0, 2, 14, 3).flip({1}); },
       [](auto& r) { return ref::flip(slice_ref(ref::permute(r, {1, 0}), 0, 2, 3, 4), 1); }},
      {"repeat", {2, 3}, L::kTransposed, [](auto& x) { return x.repeat({2, 1, 3}); },
       [](auto& r) { return ref::gather_index({2, 2, 9}, r, [](auto i) { return std::vector<int64_t>{i[1] % 2, i[2] % 3}; }); }},
      {"triu", {6, 7}, L::kContiguous, [](auto& x) { return x.triu(1); },
       [](auto& r) { Ref o = r; for (int64_t i = 0; i < o.numel(); ++i) { auto idx = o.index_of(i); if (idx[1] - idx[0] < 1) o.v[i] = 0; } return o; }},
      {"tril_batched", {2, 5, 4}, L::kStrided, [](auto& x) { return x.tril(-1); },
       [](auto& r) { Ref o = r; for (int64_t i = 0; i < o.numel(); ++i) { auto idx = o.index_of(i); if (idx[2] - idx[1] > -1) o.v[i] = 0; } return o; }},
      {"contiguous_of_view", {127, 127}, L::kTransposed, [](auto& x) { return x.contiguous(); }, [](auto& r) { return r; }},
      {"zero_size_reshape", {0, 5}, L::kContiguous, [](auto& x) { return x.reshape({5, 0, 2}).t(); }, [](auto& r) { return Ref::filled({5, 2, 0}, 0); }},
  };
  std::vector<OpCase> cases;
  size_t k = 0;
  for (const auto& s : specs) {
    // Two dtypes per spec, rotating through the list.
    for (int rep = 0; rep < 2; ++rep) cases.push_back(move_case(s, movement_dtypes()[(k + rep * 3) % movement_dtypes().size()]));
    ++k;
  }
  // cat / stack / split / chunk with mixed layouts and dtypes.
  for (DType t : {DType::kF32, DType::kI16, DType::kBool, DType::kBF16}) {
    cases.push_back({join_name({"cat_axis1", dname(t)}), {t}, [t](const std::string& device) {
                       Rng rng("cat" + dname(t));
                       Input a = make_input(rng, {5, 3}, t, device, Layout::kTransposed);
                       Input b = make_input(rng, {5, 0}, t, device);
                       Input c = make_input(rng, {5, 7}, t, device, Layout::kPadded);
                       EXPECT_TRUE(matches(Tensor::cat({a.t, b.t, c.t}, 1), ref::cat({a.r, b.r, c.r}, 1), t, tol_for(t)));
                     }});
    cases.push_back({join_name({"stack_split_chunk", dname(t)}), {t}, [t](const std::string& device) {
                       Rng rng("stack" + dname(t));
                       Input a = make_input(rng, {4, 6}, t, device, Layout::kFlipped);
                       Input b = make_input(rng, {4, 6}, t, device, Layout::kStrided);
                       Tensor s = Tensor::stack({a.t, b.t}, 1);  // [4, 2, 6]
                       Ref rs = ref::gather_index({4, 2, 6}, a.r, [](auto i) { return std::vector<int64_t>{i[0], i[2]}; });
                       for (int64_t i = 0; i < rs.numel(); ++i) {
                         auto idx = rs.index_of(i);
                         if (idx[1] == 1) rs.v[i] = b.r.at({idx[0], idx[2]});
                       }
                       EXPECT_TRUE(matches(s, rs, t, tol_for(t)));
                       auto parts = s.split({1, 3}, 0);
                       ASSERT_EQ(parts.size(), 2u);
                       EXPECT_TRUE(matches(parts[1], ref::slice(rs, 0, 1, 1, 3), t, tol_for(t)));
                       auto chunks = a.t.chunk(4, 1);  // 6 / 4 -> chunks of 2
                       ASSERT_EQ(chunks.size(), 3u);
                       EXPECT_TRUE(matches(chunks[2], ref::slice(a.r, 1, 4, 1, 2), t, tol_for(t)));
                     }});
  }
  cases.push_back({"cat_promotes_dtypes", {DType::kI8, DType::kF16}, [](const std::string& device) {
                     Rng rng("catpromote");
                     Input a = make_input(rng, {3, 4}, DType::kI8, device, Layout::kContiguous, {-9, 9, true});
                     Input b = make_input(rng, {2, 4}, DType::kF16, device, Layout::kTransposed);
                     EXPECT_TRUE(matches(Tensor::cat({a.t, b.t}, 0), ref::cat({a.r, b.r}, 0), DType::kF16, tol_for(DType::kF16)));
                   }});
  cases.push_back({"cat_many_pieces_4097", {DType::kF32}, [](const std::string& device) {
                     Rng rng("catmany");
                     std::vector<Tensor> ts;
                     std::vector<Ref> rs;
                     for (int i = 0; i < 17; ++i) {
                       Input p = make_input(rng, {241}, DType::kF32, device, i % 2 ? Layout::kFlipped : Layout::kContiguous);
                       ts.push_back(p.t);
                       rs.push_back(p.r);
                     }
                     EXPECT_TRUE(matches(Tensor::cat(ts, 0), ref::cat(rs, 0), DType::kF32, {}));
                   }});
  return cases;
}

TEST_P(Movement, MatchesFloat64Reference) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Movement);

}  // namespace nvhcq::optest
