// nvhcq quantize's library: llama.cpp's mix, reference-quantizer bytes, copied
// metadata, and errors.

#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/quant/quant_registry.h"
#include "llm/synth/model_quantizer.h"
#include "llm/synth/model_synthesizer.h"
#include "model_test_models.h"

namespace nvhcq::llm {
namespace {

QuantizeResult quantize(const std::string& in, const std::string& out, LlamaFtype ftype) {
  QuantizeOptions o;
  o.ftype = ftype;
  cpu::ThreadPool pool(2);
  return quantize_model(in, out, o, pool);
}

TEST(SynthQuantize, QuantizingAnF32SynthGivesTheSynthOfThatType) {
  // synth at f32 then quantize == synth at the type directly: both quantize the same
  // seeded values with the same rules and the reference quantizer.
  const std::string& f32 = model_test::tiny_model("llama", LlamaFtype::ALL_F32);
  const std::string out = model_test::temp_path("quantized-q4_k_m.gguf");
  const QuantizeResult r = quantize(f32, out, LlamaFtype::MOSTLY_Q4_K_M);
  const GgufFile a = GgufFile::open(out);
  const GgufFile b = GgufFile::open(model_test::tiny_model("llama", LlamaFtype::MOSTLY_Q4_K_M));
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  EXPECT_EQ(r.tensors, a.tensors().size());
  EXPECT_EQ(r.requantized, 0u);
  size_t converted = 0;
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const GgufTensorInfo& ta = a.tensors()[i];
    const GgufTensorInfo& tb = b.tensor_info(ta.name);
    EXPECT_EQ(ta.type, tb.type) << ta.name;
    EXPECT_EQ(ta.dims, tb.dims) << ta.name;
    const auto da = a.tensor_data(ta), db = b.tensor_data(tb);
    EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end())) << ta.name;
    converted += ta.type != GgmlType::F32;
  }
  EXPECT_EQ(r.converted, converted);
  // Metadata: copied, with the new file type.
  EXPECT_EQ(a.metadata().get_u32("general.file_type"),
            static_cast<uint32_t>(LlamaFtype::MOSTLY_Q4_K_M));
  EXPECT_EQ(a.metadata().get_u32("general.quantization_version"), 2u);
  EXPECT_EQ(a.metadata().get_string_array("tokenizer.ggml.tokens"),
            b.metadata().get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(a.metadata().get_u32("llama.block_count"), 2u);
}

TEST(SynthQuantize, RequantizingGoesThroughF32AndIsCounted) {
  const std::string& q8 = model_test::tiny_model("llama", LlamaFtype::MOSTLY_Q8_0);
  const std::string out = model_test::temp_path("requantized-q4_0.gguf");
  const QuantizeResult r = quantize(q8, out, LlamaFtype::MOSTLY_Q4_0);
  EXPECT_GT(r.requantized, 0u);
  const GgufFile in = GgufFile::open(q8), f = GgufFile::open(out);
  const GgufTensorInfo& src = in.tensor_info("blk.0.ffn_up.weight");
  const GgufTensorInfo& dst = f.tensor_info("blk.0.ffn_up.weight");
  ASSERT_EQ(dst.type, GgmlType::Q4_0);
  // Row 5: dequantize the Q8_0 row, quantize to Q4_0: the same bytes.
  const int64_t cols = 256;
  std::vector<float> row(cols);
  dequantize_row(GgmlType::Q8_0,
                 in.tensor_data(src).data() + 5 * ggml_row_bytes(GgmlType::Q8_0, cols), row.data(),
                 cols);
  std::vector<uint8_t> q(ggml_row_bytes(GgmlType::Q4_0, cols));
  quantize_row(GgmlType::Q4_0, row.data(), q.data(), cols);
  EXPECT_TRUE(std::equal(q.begin(), q.end(), f.tensor_data(dst).data() + 5 * q.size()));
  // Tensors whose type stays are copied unchanged (norms).
  const auto a = in.tensor_data(in.tensor_info("blk.1.ffn_norm.weight"));
  const auto b = f.tensor_data(f.tensor_info("blk.1.ffn_norm.weight"));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

TEST(SynthQuantize, BadInputsAreClearErrors) {
  const std::string& f32 = model_test::tiny_model();
  EXPECT_THROW(quantize(f32, f32, LlamaFtype::MOSTLY_Q8_0), UsageError);
  EXPECT_THROW(quantize(model_test::temp_path("missing.gguf"), model_test::temp_path("x.gguf"),
                        LlamaFtype::MOSTLY_Q8_0),
               Error);
  const std::string junk = model_test::temp_path("junk.gguf");
  std::ofstream(junk) << "this is not a GGUF file at all, just text";
  try {
    quantize(junk, model_test::temp_path("y.gguf"), LlamaFtype::MOSTLY_Q8_0);
    FAIL() << "no error for a text file";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("junk.gguf"), std::string::npos) << e.what();
  }
  // No output file is left behind by a failed conversion.
  std::ifstream left(model_test::temp_path("y.gguf"));
  EXPECT_FALSE(left.good());
}

}  // namespace
}  // namespace nvhcq::llm
