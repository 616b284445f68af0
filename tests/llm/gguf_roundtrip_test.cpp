// Round trips through GgufWriter/GgufFileWriter and GgufFile: every metadata type,
// tensors of several ggml types and shapes, alignment, versions 2 and 3.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/gguf/gguf_file_writer.h"
#include "llm/gguf/gguf_writer.h"

namespace nvhcq::llm {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "nvhcq_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Deterministic non-zero bytes, different per tensor.
std::vector<uint8_t> pattern_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng() % 255 + 1);
  return out;
}

// A writer holding one value of every metadata type and a few tensors.
GgufWriter make_plan(uint32_t version) {
  GgufWriter w(version);
  w.set_string("general.architecture", "llama");
  w.set_scalar<uint8_t>("t.u8", 200);
  w.set_scalar<int8_t>("t.i8", -100);
  w.set_scalar<uint16_t>("t.u16", 60000);
  w.set_scalar<int16_t>("t.i16", -30000);
  w.set_scalar<uint32_t>("t.u32", 4000000000u);
  w.set_scalar<int32_t>("t.i32", -2000000000);
  w.set_scalar<uint64_t>("t.u64", 0xfedcba9876543210ull);
  w.set_scalar<int64_t>("t.i64", -0x123456789abcdefll);
  w.set_scalar<float>("t.f32", 3.25f);
  w.set_scalar<double>("t.f64", -1.0e300);
  w.set_scalar<bool>("t.bool", true);
  w.set_string("t.string", std::string("caf\xc3\xa9 \0 nul", 12));
  w.set_string("t.empty_string", "");
  w.set_array<uint8_t>("t.arr_u8", {1, 2, 255});
  w.set_array<int8_t>("t.arr_i8", {-1, 0, 127});
  w.set_array<uint16_t>("t.arr_u16", {65535, 7});
  w.set_array<int16_t>("t.arr_i16", {-32768, 32767});
  w.set_array<uint32_t>("t.arr_u32", {0, 1, 4294967295u});
  w.set_array<int32_t>("t.arr_i32", {-5, 6, -7});
  w.set_array<uint64_t>("t.arr_u64", {1ull << 63});
  w.set_array<int64_t>("t.arr_i64", {-(1ll << 62), 3});
  w.set_array<float>("t.arr_f32", {0.5f, -1.5f, 1e-30f});
  w.set_array<double>("t.arr_f64", {2.5, -0.125});
  w.set_array<bool>("t.arr_bool", {true, false, true});
  w.set_string_array("t.arr_string", {"<unk>", "", "\xe2\x96\x81the", "a b"});
  w.set_array<int32_t>("t.arr_empty", {});
  w.add_tensor("token_embd.weight", GgmlType::F32, {8, 3});
  w.add_tensor("blk.0.attn_q.weight", GgmlType::Q4_0, {64, 2});
  w.add_tensor("blk.0.ffn_up.weight", GgmlType::Q4_K, {256, 2, 1});
  w.add_tensor("norm", GgmlType::F16, {5});
  w.add_tensor("blk.0.bias", GgmlType::Q8_0, {32, 1, 1, 2});
  return w;
}

std::vector<std::vector<uint8_t>> make_data(const GgufWriter& w) {
  std::vector<std::vector<uint8_t>> data;
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    data.push_back(pattern_bytes(w.tensors()[i].n_bytes, static_cast<uint32_t>(i + 1)));
  }
  return data;
}

void expect_same_file(const GgufWriter& w, const std::vector<std::vector<uint8_t>>& data,
                      const GgufFile& f) {
  EXPECT_EQ(f.version(), w.version());
  EXPECT_EQ(f.alignment(), w.alignment());
  EXPECT_EQ(f.data_offset(), w.data_offset());
  EXPECT_EQ(f.data_offset() % f.alignment(), 0u);
  ASSERT_EQ(f.metadata().size(), w.metadata().size());
  for (size_t i = 0; i < w.metadata().size(); ++i) {
    const auto& [key, value] = w.metadata().entries()[i];
    EXPECT_EQ(f.metadata().entries()[i].first, key) << "metadata order must be kept";
    EXPECT_TRUE(f.metadata().entries()[i].second == value) << key;
  }
  ASSERT_EQ(f.tensors().size(), w.tensors().size());
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    const GgufTensorInfo& a = w.tensors()[i];
    const GgufTensorInfo& b = f.tensors()[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.type, a.type);
    EXPECT_EQ(b.dims, a.dims);
    EXPECT_EQ(b.offset, a.offset);
    EXPECT_EQ(b.n_bytes, a.n_bytes);
    EXPECT_EQ((f.data_offset() + b.offset) % f.alignment(), 0u) << b.name;
    auto view = f.tensor(a.name);
    ASSERT_EQ(view.data.size(), data[i].size());
    EXPECT_TRUE(std::equal(view.data.begin(), view.data.end(), data[i].begin())) << a.name;
    // Zero-copy: the view points into the file's own bytes.
    EXPECT_EQ(view.data.data(), f.bytes().data() + f.data_offset() + b.offset);
  }
}

TEST(GgufRoundTrip, EveryMetadataTypeAndTensorInMemory) {
  for (uint32_t version : {2u, 3u}) {
    GgufWriter w = make_plan(version);
    auto data = make_data(w);
    std::vector<std::span<const uint8_t>> spans(data.begin(), data.end());
    std::vector<uint8_t> bytes = w.to_bytes(spans);
    EXPECT_EQ(bytes.size(), w.file_size());
    GgufFile f = GgufFile::from_bytes(bytes);
    expect_same_file(w, data, f);

    const GgufMetadata& m = f.metadata();
    EXPECT_EQ(m.get_string("general.architecture"), "llama");
    EXPECT_EQ(m.get<uint8_t>("t.u8"), 200);
    EXPECT_EQ(m.get<int8_t>("t.i8"), -100);
    EXPECT_EQ(m.get<uint16_t>("t.u16"), 60000);
    EXPECT_EQ(m.get<int16_t>("t.i16"), -30000);
    EXPECT_EQ(m.get_u32("t.u32"), 4000000000u);
    EXPECT_EQ(m.get_i32("t.i32"), -2000000000);
    EXPECT_EQ(m.get_u64("t.u64"), 0xfedcba9876543210ull);
    EXPECT_EQ(m.get_i64("t.i64"), -0x123456789abcdefll);
    EXPECT_EQ(m.get_f32("t.f32"), 3.25f);
    EXPECT_EQ(m.get_f64("t.f64"), -1.0e300);
    EXPECT_TRUE(m.get_bool("t.bool"));
    EXPECT_EQ(m.get_string("t.string"), std::string("caf\xc3\xa9 \0 nul", 12));
    EXPECT_EQ(m.get_string("t.empty_string"), "");
    EXPECT_EQ(m.get_array<uint8_t>("t.arr_u8"), (std::vector<uint8_t>{1, 2, 255}));
    EXPECT_EQ(m.get_array<int8_t>("t.arr_i8"), (std::vector<int8_t>{-1, 0, 127}));
    EXPECT_EQ(m.get_array<uint16_t>("t.arr_u16"), (std::vector<uint16_t>{65535, 7}));
    EXPECT_EQ(m.get_array<int16_t>("t.arr_i16"), (std::vector<int16_t>{-32768, 32767}));
    EXPECT_EQ(m.get_array<uint32_t>("t.arr_u32"), (std::vector<uint32_t>{0, 1, 4294967295u}));
    EXPECT_EQ(m.get_i32_array("t.arr_i32"), (std::vector<int32_t>{-5, 6, -7}));
    EXPECT_EQ(m.get_array<uint64_t>("t.arr_u64"), (std::vector<uint64_t>{1ull << 63}));
    EXPECT_EQ(m.get_array<int64_t>("t.arr_i64"), (std::vector<int64_t>{-(1ll << 62), 3}));
    EXPECT_EQ(m.get_f32_array("t.arr_f32"), (std::vector<float>{0.5f, -1.5f, 1e-30f}));
    EXPECT_EQ(m.get_array<double>("t.arr_f64"), (std::vector<double>{2.5, -0.125}));
    EXPECT_EQ(m.get_array<bool>("t.arr_bool"), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(m.get_string_array("t.arr_string"),
              (std::vector<std::string>{"<unk>", "", "\xe2\x96\x81the", "a b"}));
    EXPECT_EQ(m.get_array_size("t.arr_empty"), 0u);
    EXPECT_TRUE(m.get_i32_array("t.arr_empty").empty());
  }
}

TEST(GgufRoundTrip, StreamedToDiskInPiecesWithCustomAlignment) {
  GgufWriter w = make_plan(3);
  w.set_alignment(128);
  auto data = make_data(w);
  const std::string path = temp_path("stream.gguf");
  {
    GgufFileWriter out(w, path);
    // Feed each tensor in uneven pieces, as a converter streaming from another file would.
    for (const auto& d : data) {
      size_t pos = 0, step = 1;
      while (pos < d.size()) {
        const size_t n = std::min(step, d.size() - pos);
        out.write(std::span<const uint8_t>(d).subspan(pos, n));
        pos += n;
        step = step * 3 + 1;
      }
    }
    EXPECT_EQ(out.current_tensor(), nullptr);
    out.finish();
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.alignment(), 128u);
  EXPECT_EQ(f.metadata().get_u32("general.alignment"), 128u);
  expect_same_file(w, data, f);
  // The streamed file is byte-identical to the in-memory rendering.
  std::vector<std::span<const uint8_t>> spans(data.begin(), data.end());
  EXPECT_EQ(read_file(path), w.to_bytes(spans));
  std::filesystem::remove(path);
}

TEST(GgufRoundTrip, WriterRefusesMisuseAndLeavesNoPartialFile) {
  GgufWriter w;
  w.add_tensor("a", GgmlType::F32, {4});
  w.add_tensor("b", GgmlType::F32, {2});
  const std::string path = temp_path("misuse.gguf");
  std::vector<uint8_t> four(16, 7), two(8, 9);
  {
    GgufFileWriter out(w, path);
    EXPECT_THROW(out.write_tensor("b", two), UsageError) << "out of order";
    EXPECT_THROW(out.write(std::vector<uint8_t>(17, 1)), UsageError) << "past the tensor's end";
    out.write_tensor("a", four);
    EXPECT_THROW(out.finish(), UsageError) << "tensor b is missing";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  try {
    GgufFileWriter bad(w, "/nonexistent-dir/x.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.gguf"), std::string::npos) << e.what();
  }

  EXPECT_THROW(w.add_tensor("a", GgmlType::F32, {1}), FormatError) << "duplicate name";
  EXPECT_THROW(w.add_tensor(std::string(64, 'x'), GgmlType::F32, {1}), FormatError);
  EXPECT_THROW(w.add_tensor("c", GgmlType::Q4_0, {33}), FormatError) << "partial block";
  EXPECT_THROW(w.add_tensor("d", GgmlType::F32, {1, 1, 1, 1, 1}), FormatError);
  EXPECT_THROW(w.set_alignment(24), FormatError);
  EXPECT_THROW(w.set("general.alignment", GgufValue::scalar<int32_t>(64)), FormatError);
}

TEST(GgufRoundTrip, MetadataOnlyFileHasNoTrailingPadding) {
  GgufWriter w;
  w.set_string("tokenizer.ggml.model", "gpt2");
  std::vector<uint8_t> bytes = w.to_bytes({});
  GgufFile f = GgufFile::from_bytes(bytes);
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.metadata().get_string("tokenizer.ggml.model"), "gpt2");
  // A file without tensors may end right after its metadata (the vocab files do).
  const uint64_t unpadded = 4 + 4 + 8 + 8 + 8 + 20 + 4 + 8 + 4;
  std::vector<uint8_t> trimmed(bytes.begin(), bytes.begin() + static_cast<long>(unpadded));
  EXPECT_EQ(GgufFile::from_bytes(trimmed).metadata().get_string("tokenizer.ggml.model"), "gpt2");
}

TEST(GgufAccessors, RequiredOptionalAndConversionErrorsNameTheKey) {
  GgufMetadata m;
  m.set_scalar<int32_t>("llama.block_count", 16);
  m.set_scalar<uint64_t>("big", 1ull << 40);
  m.set_scalar<int32_t>("negative", -1);
  m.set_scalar<float>("eps", 1e-5f);
  m.set_string("name", "x");
  EXPECT_EQ(m.get_u32("llama.block_count"), 16u) << "an i32 that fits reads as u32";
  EXPECT_EQ(m.get_u64("llama.block_count"), 16u);
  EXPECT_FLOAT_EQ(m.get_f32("eps"), 1e-5f);
  EXPECT_FALSE(m.find_u32("absent").has_value());
  EXPECT_EQ(m.find_u32("llama.block_count"), 16u);

  auto message_of = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const FormatError& e) {
      return e.what();
    }
    return "<no FormatError>";
  };
  EXPECT_NE(message_of([&] { m.get_u32("llama.missing"); }).find("missing metadata key 'llama.missing'"),
            std::string::npos);
  const std::string big = message_of([&] { m.get_u32("big"); });
  EXPECT_NE(big.find("'big'"), std::string::npos) << big;
  EXPECT_NE(big.find("1099511627776"), std::string::npos) << big;
  EXPECT_NE(message_of([&] { m.get_u32("negative"); }).find("-1"), std::string::npos);
  EXPECT_NE(message_of([&] { m.get_string("eps"); }).find("'eps' is f32, expected a string"),
            std::string::npos);
  EXPECT_NE(message_of([&] { m.get_u32("eps"); }).find("expected an integer"), std::string::npos);
  EXPECT_NE(message_of([&] { m.get_string_array("name"); }).find("expected an array of strings"),
            std::string::npos);
  // Present with the wrong type is an error even through find_*.
  EXPECT_THROW(m.find_u32("name"), FormatError);

  m.set_scalar<uint32_t>("llama.block_count", 32);
  EXPECT_EQ(m.get_u32("llama.block_count"), 32u);
  EXPECT_EQ(m.entries().front().first, "llama.block_count") << "replacing keeps the position";
  EXPECT_TRUE(m.erase("big"));
  EXPECT_FALSE(m.contains("big"));
  EXPECT_EQ(m.get_string("name"), "x");
}

}  // namespace
}  // namespace nvhcq::llm
