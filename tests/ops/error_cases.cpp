// Invalid input raises nvhcq::Error with a message naming the problem: shape
// mismatches, invalid axes, unsupported dtypes, bad arguments.
#include "ops/op_cases.h"
#include "tensor/nn.h"

namespace nvhcq::optest {
namespace {

namespace nn = tensor::nn;

struct ErrorSpec {
  const char* name;
  const char* keyword;  // the message must mention it
  std::function<Tensor(const std::string& device)> make;
};

Tensor f32(const Shape& s, const std::string& d) { return Tensor::ones(s, DType::kF32, d); }
Tensor i32(const Shape& s, const std::string& d) { return Tensor::ones(s, DType::kI32, d); }

}  // namespace

std::vector<OpCase> error_cases() {
  using D = const std::string&;
  const std::vector<ErrorSpec> specs = {
      {"add_shape_mismatch", "cannot be broadcast", [](D d) { return f32({2, 3}, d) + f32({4, 3}, d); }},
      {"where_shape_mismatch", "cannot be broadcast", [](D d) { return Tensor::where(f32({2}, d).gt(0), f32({3}, d), f32({2}, d)); }},
      {"matmul_inner_mismatch", "do not align", [](D d) { return f32({2, 3}, d).matmul(f32({4, 5}, d)); }},
      {"matmul_batch_mismatch", "cannot be broadcast", [](D d) { return f32({2, 3, 4}, d).matmul(f32({3, 4, 5}, d)); }},
      {"matmul_scalar", "at least one axis", [](D d) { return f32({}, d).matmul(f32({3}, d)); }},
      {"matmul_bool", "not supported for dtype bool", [](D d) { return f32({2, 2}, d).gt(0).matmul(f32({2, 2}, d).gt(0)); }},
      {"cat_shape_mismatch", "differ", [](D d) { return Tensor::cat({f32({2, 3}, d), f32({2, 4}, d)}, 0); }},
      {"cat_empty_list", "no tensors", [](D) { return Tensor::cat({}, 0); }},
      {"stack_shape_mismatch", "differ", [](D d) { return Tensor::stack({f32({2}, d), f32({3}, d)}); }},
      {"sum_invalid_axis", "axis 2 is out of range", [](D d) { return f32({2, 3}, d).sum({2}); }},
      {"sum_duplicate_axis", "twice", [](D d) { return f32({2, 3}, d).sum({1, -1}); }},
      {"softmax_invalid_axis", "out of range", [](D d) { return f32({2, 3}, d).softmax(5); }},
      {"argmax_invalid_axis", "out of range", [](D d) { return f32({2, 3}, d).argmax(-3); }},
      {"cumsum_invalid_axis", "out of range", [](D d) { return f32({4}, d).cumsum(1); }},
      {"permute_duplicate", "twice", [](D d) { return f32({2, 3}, d).permute({0, 0}); }},
      {"permute_wrong_rank", "axes", [](D d) { return f32({2, 3}, d).permute({0}); }},
      {"unsqueeze_invalid_axis", "out of range", [](D d) { return f32({2, 3}, d).unsqueeze(4); }},
      {"reshape_wrong_count", "cannot reshape", [](D d) { return f32({2, 3}, d).reshape({4, 2}); }},
      {"reshape_two_inferred", "only one", [](D d) { return f32({2, 3}, d).reshape({-1, -1}); }},
      {"expand_incompatible", "cannot broadcast", [](D d) { return f32({3, 2}, d).expand({3, 4}); }},
      {"slice_zero_step", "step", [](D d) { return f32({5}, d).slice(0, 0, 5, 0); }},
      {"select_out_of_range", "out of range", [](D d) { return f32({5}, d).select(0, 5); }},
      {"split_sizes_mismatch", "add up", [](D d) { return f32({5}, d).split(std::vector<int64_t>{2, 2})[0]; }},
      {"pad_reflect_too_large", "reflect", [](D d) { return f32({3}, d).pad({{3, 0}}, PadMode::kReflect); }},
      {"pad_too_many_pairs", "padding pairs", [](D d) { return f32({3}, d).pad({{1, 0}, {1, 1}}); }},
      {"bitwise_and_float", "not supported for dtype f32", [](D d) { return f32({2}, d).bitwise_and(f32({2}, d)); }},
      {"shl_float", "not supported for dtype f16", [](D d) { return f32({2}, d).cast(DType::kF16).shl(1); }},
      {"bitwise_not_float", "not supported for dtype bf16", [](D d) { return f32({2}, d).cast(DType::kBF16).bitwise_not(); }},
      {"neg_bool", "not supported for dtype bool", [](D d) { return f32({2}, d).gt(0).neg(); }},
      {"sub_bool", "not supported for dtype bool", [](D d) { return f32({2}, d).gt(0) - f32({2}, d).gt(1); }},
      {"conv2d_int", "not supported for dtype i32", [](D d) { return nn::conv2d(i32({1, 1, 4, 4}, d), i32({1, 1, 3, 3}, d)); }},
      {"conv2d_groups_mismatch", "groups", [](D d) { return nn::conv2d(f32({1, 4, 5, 5}, d), f32({6, 3, 3, 3}, d), Tensor(), 1, 0, 1, 2); }},
      {"conv2d_too_small", "too small", [](D d) { return nn::conv2d(f32({1, 1, 2, 2}, d), f32({1, 1, 3, 3}, d)); }},
      {"conv2d_rank", "must have 4 axes", [](D d) { return nn::conv2d(f32({4, 5, 5}, d), f32({1, 4, 3, 3}, d)); }},
      {"conv_transpose_output_padding", "output_padding", [](D d) { return nn::conv_transpose2d(f32({1, 1, 3, 3}, d), f32({1, 1, 2, 2}, d), Tensor(), 1, 0, 1); }},
      {"avg_pool_int", "not supported for dtype i32", [](D d) { return nn::avg_pool2d(i32({1, 1, 4, 4}, d), 2); }},
      {"max_pool_padding", "half the kernel", [](D d) { return nn::max_pool2d(f32({1, 1, 4, 4}, d), 2, 2, 2); }},
      {"layer_norm_shape", "normalized shape", [](D d) { return nn::layer_norm(f32({2, 3}, d), {4}); }},
      {"group_norm_groups", "groups", [](D d) { return nn::group_norm(f32({2, 6, 3}, d), 4); }},
      {"sdpa_mismatch", "do not match", [](D d) { return nn::scaled_dot_product_attention(f32({2, 4, 8}, d), f32({2, 5, 7}, d), f32({2, 5, 8}, d)); }},
      {"sdpa_int", "not supported for dtype i32", [](D d) { return nn::scaled_dot_product_attention(i32({2, 4}, d), i32({3, 4}, d), i32({3, 4}, d)); }},
      {"cross_entropy_reduction", "reduction", [](D d) { return nn::cross_entropy(f32({2, 3}, d), i32({2}, d), "average"); }},
      {"cross_entropy_target_shape", "class targets", [](D d) { return nn::cross_entropy(f32({2, 3}, d), i32({3}, d)); }},
      {"gather_float_index", "integer dtype", [](D d) { return f32({3, 3}, d).gather(0, f32({3, 3}, d)); }},
      {"gather_rank_mismatch", "as many axes", [](D d) { return f32({3, 3}, d).gather(0, i32({3}, d)); }},
      {"index_select_2d_index", "at most one axis", [](D d) { return f32({3, 3}, d).index_select(0, i32({2, 2}, d)); }},
      {"scatter_add_shapes", "exceeds", [](D d) { return f32({3, 3}, d).scatter_add(0, i32({4, 4}, d), f32({3, 3}, d)); }},
      {"masked_fill_non_bool", "dtype bool", [](D d) { return f32({3}, d).masked_fill(f32({3}, d), 0); }},
      {"one_hot_float", "integer dtype", [](D d) { return nn::one_hot(f32({3}, d), 4); }},
      {"one_hot_zero_classes", "positive", [](D d) { return nn::one_hot(i32({3}, d), 0); }},
      {"embedding_float_ids", "integer dtype", [](D d) { return nn::embedding(f32({3}, d), f32({5, 2}, d)); }},
      {"linear_mismatch", "does not match", [](D d) { return nn::linear(f32({2, 3}, d), f32({4, 5}, d)); }},
      {"max_of_empty", "no value", [](D d) { return f32({3, 0}, d).max({1}); }},
      {"argmax_of_empty", "no value", [](D d) { return f32({0}, d).argmax(); }},
      {"rand_int_dtype", "not supported for dtype i32", [](D d) { return Tensor::rand({3}, 1, DType::kI32, d); }},
      {"randint_bad_range", "below", [](D d) { return Tensor::randint(5, 5, {3}, 1, DType::kI64, d); }},
      {"negative_extent", "negative", [](D d) { return Tensor::zeros({2, -1}, DType::kF32, d); }},
      {"too_many_axes", "more than 16 axes", [](D d) { return Tensor::zeros(Shape(17, 1), DType::kF32, d); }},
      {"from_vector_count", "do not fill", [](D d) { return Tensor::from_vector<float>({1, 2, 3}, {2, 2}, DType::kF32, d); }},
      {"unknown_device", "no tensor backend", [](D) { return Tensor::zeros({2}, DType::kF32, "no-such-device"); }},
      {"arange_zero_step", "step", [](D d) { return Tensor::arange(0, 5, 0, std::nullopt, d); }},
      {"linspace_negative", "steps", [](D d) { return Tensor::linspace(0, 1, -1, DType::kF32, d); }},
      {"clamp_no_bounds", "bound", [](D d) { return f32({2}, d).clamp(std::nullopt, std::nullopt); }},
      {"triu_1d", "at least 2 axes", [](D d) { return f32({4}, d).triu(); }},
      {"dot_not_1d", "1-D", [](D d) { return f32({2, 2}, d).dot(f32({2, 2}, d)); }},
      {"flatten_order", "start axis", [](D d) { return f32({2, 3, 4}, d).flatten(2, 1); }},
      {"repeat_too_few", "repeat counts", [](D d) { return f32({2, 3}, d).repeat({2}); }},
      {"undefined_tensor", "undefined", [](D d) { return f32({2}, d) + Tensor(); }},
  };
  std::vector<OpCase> cases;
  for (const auto& s : specs) {
    cases.push_back({s.name, {DType::kF32}, [s](const std::string& device) {
                       EXPECT_TRUE(throws_error([&] { return s.make(device); }, s.keyword)) << s.name;
                     }});
  }
  cases.push_back({"item_needs_one_element", {DType::kF32}, [](const std::string& device) {
                     try {
                       (void)f32({2}, device).item<float>();
                       ADD_FAILURE() << "item() of two elements did not throw";
                     } catch (const Error& e) {
                       EXPECT_NE(std::string(e.what()).find("one element"), std::string::npos) << e.what();
                     }
                   }});
  cases.push_back({"parse_dtype_unknown", {DType::kF32}, [](const std::string&) {
                     EXPECT_EQ(tensor::parse_dtype("bf16"), DType::kBF16);
                     EXPECT_THROW(tensor::parse_dtype("f8"), Error);
                   }});
  return cases;
}

TEST_P(OpErrors, RaiseNvhcqError) { run_case(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpErrors);

}  // namespace nvhcq::optest
