// llama.cpp's quantization mixes: which tensor gets which type, per file type.
// Expected layer sets are written out literally (as llama-quantize prints them for
// LLaMA-7B-like and Llama-3.2-1B-like models), not recomputed from the rule.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "llm/quant/ftype_mix.h"

namespace nvhcq::llm {
namespace {

using F = LlamaFtype;
using T = GgmlType;

std::string blk(int i, const char* what) {
  return "blk." + std::to_string(i) + "." + what + ".weight";
}

const std::vector<int64_t> kMatrix = {4096, 4096};
const std::vector<int64_t> kVector = {4096};

struct Model7B : QuantMixModel {
  Model7B() { n_layer = 32; }  // n_gqa 1, separate output
};

std::set<int> layers_with(F ftype, const char* what, T type, const QuantMixModel& m,
                          const std::vector<int64_t>& shape = kMatrix) {
  std::set<int> out;
  for (int i = 0; i < m.n_layer; ++i) {
    if (llama_tensor_type(ftype, blk(i, what), shape, m) == type) out.insert(i);
  }
  return out;
}

TEST(QuantFtype, NamesIdsAndDefaultTypes) {
  EXPECT_EQ(llama_ftype_from_name("q4_k_m"), F::MOSTLY_Q4_K_M);
  EXPECT_EQ(llama_ftype_from_name("Q8_0"), F::MOSTLY_Q8_0);
  EXPECT_EQ(llama_ftype_from_name("bf16"), F::MOSTLY_BF16);
  EXPECT_FALSE(llama_ftype_from_name("Q4_K_X").has_value());
  EXPECT_FALSE(llama_ftype_from_name("IQ2_XXS").has_value());  // IQ mixes are not supported
  EXPECT_EQ(llama_ftype_name(F::MOSTLY_Q5_K_S), "Q5_K_S");
  EXPECT_EQ(static_cast<uint32_t>(F::MOSTLY_Q4_K_M), 15u);  // general.file_type values
  EXPECT_EQ(static_cast<uint32_t>(F::MOSTLY_Q8_0), 7u);
  EXPECT_EQ(static_cast<uint32_t>(F::MOSTLY_BF16), 32u);
  EXPECT_EQ(llama_ftype_from_id(18), F::MOSTLY_Q6_K);
  EXPECT_FALSE(llama_ftype_from_id(4).has_value());  // removed Q4_1_SOME_F16
  EXPECT_EQ(llama_ftype_default_type(F::MOSTLY_Q4_K_M), T::Q4_K);
  EXPECT_EQ(llama_ftype_default_type(F::MOSTLY_Q3_K_L), T::Q3_K);
  EXPECT_EQ(llama_ftype_default_type(F::MOSTLY_F16), T::F16);
}

TEST(QuantFtype, Q4_K_MOn32Layers) {
  const Model7B m;
  // attn_v and ffn_down: Q6_K in the first and last 4 layers and every third in between.
  const std::set<int> more = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_M, "attn_v", T::Q6_K, m), more);
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_M, "ffn_down", T::Q6_K, m), more);
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_M, "attn_v", T::Q4_K, m).size(), 16u);
  for (const char* w : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
    EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_M, w, T::Q4_K, m).size(), 32u) << w;
  }
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output.weight", kMatrix, m), T::Q6_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "token_embd.weight", kMatrix, m), T::Q4_K);
  // 1-D tensors and norms keep their type.
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(3, "attn_norm"), kVector, m), T::F32);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output_norm.weight", kVector, m), T::F32);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(0, "attn_v"), {{4096, 1}}, m, T::F16), T::F16);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "blk.0.attn_q.bias", kMatrix, m, T::F32), T::F32);
}

TEST(QuantFtype, Llama32_1BTiedEmbeddingsAndGqa) {
  QuantMixModel m;
  m.n_layer = 16;
  m.n_gqa = 4;
  m.has_output = false;  // token_embd is the output: quantized like it
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_M, "attn_v", T::Q6_K, m),
            (std::set<int>{0, 1, 4, 7, 10, 13, 14, 15}));
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "token_embd.weight", {{2048, 128256}}, m), T::Q6_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q8_0, "token_embd.weight", {{2048, 128256}}, m), T::Q8_0);
  // Q2_K gives attn_v Q4_K when heads are shared by 4 or more.
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q2_K, blk(5, "attn_v"), kMatrix, m), T::Q4_K);
}

TEST(QuantFtype, OtherKMixes) {
  const Model7B m;
  // Q4_K_S: attn_v of the first 4 layers and ffn_down of the first eighth in Q5_K.
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_S, "attn_v", T::Q5_K, m), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_S, "ffn_down", T::Q5_K, m), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_S, "output.weight", kMatrix, m), T::Q6_K);
  // Q5_K_M: like Q4_K_M over a Q5_K base.
  EXPECT_EQ(layers_with(F::MOSTLY_Q5_K_M, "ffn_down", T::Q6_K, m).size(), 16u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q5_K_M, "ffn_up", T::Q5_K, m).size(), 32u);
  // Q5_K_S and Q6_K: only the output changes.
  EXPECT_EQ(layers_with(F::MOSTLY_Q5_K_S, "attn_v", T::Q5_K, m).size(), 32u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q6_K, "ffn_down", T::Q6_K, m).size(), 32u);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q6_K, "output.weight", kMatrix, m), T::Q6_K);
  // Q3_K_M: attn_v Q5_K in layers 0-1 then Q4_K; ffn_down Q5_K in the first 16th then Q4_K;
  // attn_output Q4_K; the rest Q3_K.
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_M, "attn_v", T::Q5_K, m), (std::set<int>{0, 1}));
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_M, "attn_v", T::Q4_K, m).size(), 30u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_M, "ffn_down", T::Q5_K, m), (std::set<int>{0, 1}));
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_M, "ffn_down", T::Q4_K, m).size(), 30u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_M, "attn_output", T::Q4_K, m).size(), 32u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_M, "ffn_gate", T::Q3_K, m).size(), 32u);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q3_K_M, "output.weight", kMatrix, m), T::Q6_K);
  // Q3_K_L: attn_v, ffn_down, attn_output in Q5_K. Q3_K_S: everything Q3_K but the output.
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_L, "attn_output", T::Q5_K, m).size(), 32u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q3_K_S, "attn_v", T::Q3_K, m).size(), 32u);
  // Q2_K: attn_v (n_gqa < 4), ffn_down and attn_output in Q3_K; the rest Q2_K.
  EXPECT_EQ(layers_with(F::MOSTLY_Q2_K, "attn_v", T::Q3_K, m).size(), 32u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q2_K, "ffn_down", T::Q3_K, m).size(), 32u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q2_K, "attn_output", T::Q3_K, m).size(), 32u);
  EXPECT_EQ(layers_with(F::MOSTLY_Q2_K, "attn_q", T::Q2_K, m).size(), 32u);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q2_K, "output.weight", kMatrix, m), T::Q6_K);
}

TEST(QuantFtype, LegacyAndFloatTypes) {
  const Model7B m;
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_0, blk(0, "attn_v"), kMatrix, m), T::Q4_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_0, "output.weight", kMatrix, m), T::Q6_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q5_1, "output.weight", kMatrix, m), T::Q6_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q8_0, blk(7, "ffn_down"), kMatrix, m), T::Q8_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q8_0, "output.weight", kMatrix, m), T::Q8_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_F16, "output.weight", kMatrix, m), T::F16);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_F16, blk(1, "attn_v"), {{4096, 1024}}, m), T::F16);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_BF16, "token_embd.weight", kMatrix, m), T::BF16);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_BF16, "output_norm.weight", kVector, m), T::F32);
  // Float file types need no block fit.
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_F16, blk(1, "ffn_up"), {{100, 7}}, m), T::F16);
}

TEST(QuantFtype, FallbacksWhenRowsDoNotFitBlocks) {
  const Model7B m;
  const std::vector<int64_t> cols320 = {320, 64};  // multiple of 32, not of 256
  const std::vector<int64_t> cols100 = {100, 64};  // not even of 32
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(5, "ffn_up"), cols320, m), T::Q5_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(0, "attn_v"), cols320, m), T::Q8_0);  // Q6_K
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q5_K_S, blk(5, "ffn_up"), cols320, m), T::Q5_1);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q3_K_M, blk(5, "ffn_up"), cols320, m), T::Q4_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q2_K, blk(5, "ffn_up"), cols320, m), T::Q4_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(5, "ffn_up"), cols100, m), T::F16);
  // The output tensor checks the default type's block: Q8_0 when it does not fit.
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output.weight", cols320, m), T::Q8_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_0, "output.weight", cols320, m),
            T::Q8_0);  // Q6_K -> Q8_0
  // llama.cpp defines no fallback for the 32-element formats and refuses.
  EXPECT_THROW(llama_tensor_type(F::MOSTLY_Q8_0, blk(5, "ffn_up"), cols100, m), FormatError);
}

TEST(QuantFtype, OptionsAndSpecialModels) {
  const Model7B m;
  QuantMixOptions pure;
  pure.pure = true;
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output.weight", kMatrix, m, T::F32, pure),
            T::Q4_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(0, "attn_v"), kMatrix, m, T::F32, pure),
            T::Q4_K);
  QuantMixOptions over;
  over.output_type = T::Q8_0;
  over.token_embd_type = T::F16;
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output.weight", kMatrix, m, T::F32, over),
            T::Q8_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "token_embd.weight", kMatrix, m, T::F32, over),
            T::F16);
  QuantMixOptions keep_output;
  keep_output.quantize_output = false;
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output.weight", kMatrix, m, T::F16, keep_output),
            T::F16);
  // Mixtral-like (8 experts): attn_v and attn_k in Q8_0, attn_output Q5_K for Q4_K_M.
  QuantMixModel moe;
  moe.n_layer = 32;
  moe.n_expert = 8;
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(9, "attn_v"), kMatrix, moe), T::Q8_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(9, "attn_k"), kMatrix, moe), T::Q8_0);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(9, "attn_output"), kMatrix, moe), T::Q5_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(9, "ffn_gate_inp"), kMatrix, moe), T::F32);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(6, "ffn_down_exps"), {{14336, 4096, 8}}, moe),
            T::Q6_K);
  // 70B: attn_v Q4_K layers become Q5_K.
  QuantMixModel big = Model7B();
  big.n_layer = 80;
  big.llama_70b = true;
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(40, "attn_v"), kMatrix, big), T::Q5_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(42, "attn_v"), kMatrix, big), T::Q6_K);
  // Falcon Q4_K_M: ffn_down Q6_K in the first 16th, Q5_K on use_more_bits layers, else Q4_K.
  QuantMixModel falcon = Model7B();
  falcon.falcon = true;
  EXPECT_EQ(layers_with(F::MOSTLY_Q4_K_M, "ffn_down", T::Q6_K, falcon), (std::set<int>{0, 1}));
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(6, "ffn_down"), kMatrix, falcon), T::Q5_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(7, "ffn_down"), kMatrix, falcon), T::Q4_K);
  EXPECT_EQ(llama_tensor_type(F::MOSTLY_Q4_K_M, "output.weight", kMatrix, falcon), T::Q8_0);
  // A quantized mix needs the layer count.
  EXPECT_THROW(llama_tensor_type(F::MOSTLY_Q4_K_M, blk(0, "attn_q"), kMatrix, QuantMixModel{}),
               FormatError);
}

}  // namespace
}  // namespace nvhcq::llm
