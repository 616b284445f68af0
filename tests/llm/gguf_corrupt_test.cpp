// Corrupt, truncated and hostile GGUF files: each must be a FormatError that says
// what is wrong, never a crash, another exception type, or a huge allocation.

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/gguf/gguf_writer.h"
#include "gguf_test_bytes.h"

namespace nvhcq::llm {
namespace {

using testing::find_bytes;
using testing::GgufBytes;
using testing::patch;

// The FormatError message parsing `bytes` gives, or "<parsed>" / "<other: ...>".
std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    GgufFile::from_bytes(bytes, "bad.gguf");
  } catch (const FormatError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<other: ") + e.what() + ">";
  }
  return "<parsed>";
}

#define EXPECT_FORMAT_ERROR(bytes, fragment)                                        \
  do {                                                                              \
    const std::string msg_ = parse_error(bytes);                                    \
    EXPECT_NE(msg_.find(fragment), std::string::npos) << "message: " << msg_;      \
    EXPECT_EQ(msg_.rfind("bad.gguf: ", 0), 0u) << "message names the file: " << msg_; \
  } while (0)

// Offset of a tensor name's bytes in the tensor table (after its u64 length).
size_t tensor_name_offset(const std::vector<uint8_t>& b, const std::string& name) {
  std::string needle(8, '\0');
  needle[0] = static_cast<char>(name.size());
  needle += name;
  const size_t at = find_bytes(b, needle);
  return at == SIZE_MAX ? at : at + 8;
}

// A small valid file with metadata of several kinds and two tensors.
std::vector<uint8_t> small_file(GgufWriter* plan = nullptr) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_scalar<uint32_t>("llama.block_count", 2);
  w.set_string_array("tokenizer.ggml.tokens", {"a", "bc", "def"});
  w.set_array<float>("tokenizer.ggml.scores", {0.5f, -1.0f, 2.0f});
  w.add_tensor("tok", GgmlType::F32, {4, 2});
  w.add_tensor("out", GgmlType::Q8_0, {32});
  std::vector<uint8_t> a(32, 3), b(34, 5);
  std::vector<std::span<const uint8_t>> data{a, b};
  auto bytes = w.to_bytes(data);
  if (plan) *plan = w;
  return bytes;
}

TEST(GgufCorrupt, TruncationAtEveryOffsetIsAFormatError) {
  GgufWriter plan;
  const std::vector<uint8_t> full = small_file(&plan);
  ASSERT_EQ(parse_error(full), "<parsed>");
  const auto& last = plan.tensors().back();
  const uint64_t data_end = plan.data_offset() + last.offset + last.n_bytes;
  for (size_t len = 0; len < full.size(); ++len) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(len));
    const std::string msg = parse_error(cut);
    if (len < data_end) {
      EXPECT_EQ(msg.rfind("bad.gguf: ", 0), 0u) << "length " << len << ": " << msg;
    } else {
      // Only the padding after the last tensor is missing: the data is all there.
      EXPECT_EQ(msg, "<parsed>") << "length " << len;
    }
  }
}

TEST(GgufCorrupt, AbsurdCountsAndLengthsAreRejectedBeforeAllocating) {
  const std::vector<uint8_t> full = small_file();
  {
    auto b = full;
    patch<uint64_t>(b, 8, 1ull << 40);  // tensor count
    EXPECT_FORMAT_ERROR(b, "tensor count 1099511627776 is impossible");
  }
  {
    auto b = full;
    patch<uint64_t>(b, 16, 1ull << 60);  // metadata count
    EXPECT_FORMAT_ERROR(b, "metadata count 1152921504606846976 is impossible");
  }
  {
    auto b = full;
    const size_t key = find_bytes(b, "general.architecture");
    patch<uint64_t>(b, key - 8, 1ull << 60);  // key length
    EXPECT_FORMAT_ERROR(b, "length 1152921504606846976");
  }
  {
    auto b = full;
    const size_t key = find_bytes(b, "general.architecture");
    // key (20 bytes), type (4), then the value's length.
    patch<uint64_t>(b, key + 20 + 4, (1ull << 60) + 3);
    EXPECT_FORMAT_ERROR(b, "metadata 'general.architecture'");
  }
  {
    auto b = full;
    const size_t key = find_bytes(b, "tokenizer.ggml.tokens");
    patch<uint64_t>(b, key + 21 + 4 + 4, 1ull << 61);  // array element count
    EXPECT_FORMAT_ERROR(b, "claims 2305843009213693952 string elements");
  }
  {
    auto b = full;
    const size_t key = find_bytes(b, "tokenizer.ggml.scores");
    patch<uint64_t>(b, key + 21 + 4 + 4, 1ull << 62);
    EXPECT_FORMAT_ERROR(b, "claims 4611686018427387904 f32 elements");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "tok");
    patch<uint64_t>(b, name + 3 + 4, 1ull << 62);  // first dimension
    EXPECT_FORMAT_ERROR(b, "tensor 'tok'");
  }
}

TEST(GgufCorrupt, UnknownTypesAndBadStructure) {
  const std::vector<uint8_t> full = small_file();
  {
    auto b = full;
    const size_t key = find_bytes(b, "llama.block_count");
    patch<uint32_t>(b, key + 17, 13);  // value type
    EXPECT_FORMAT_ERROR(b, "metadata 'llama.block_count' has unknown value type id 13");
  }
  {
    auto b = full;
    const size_t key = find_bytes(b, "tokenizer.ggml.scores");
    patch<uint32_t>(b, key + 21 + 4, 9);  // element type: array
    EXPECT_FORMAT_ERROR(b, "array of arrays");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "out");
    patch<uint32_t>(b, name + 3 + 4 + 8, 4);  // ggml type 4 was removed from ggml
    EXPECT_FORMAT_ERROR(b, "tensor 'out' has unknown ggml type id 4");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "out");
    patch<uint32_t>(b, name + 3, 5);  // n_dims
    EXPECT_FORMAT_ERROR(b, "tensor 'out' has 5 dimensions");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "out");
    patch<uint64_t>(b, name + 3 + 4, 33);  // a Q8_0 row of 33 elements
    EXPECT_FORMAT_ERROR(b, "not a whole number of q8_0 blocks");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "out");
    patch<uint64_t>(b, name + 3 + 4 + 8 + 4, 0);  // same offset as 'tok'
    EXPECT_FORMAT_ERROR(b, "overlap");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "out");
    patch<uint64_t>(b, name + 3 + 4 + 8 + 4, 33);  // misaligned
    EXPECT_FORMAT_ERROR(b, "not a multiple of the alignment 32");
  }
  {
    auto b = full;
    const size_t name = tensor_name_offset(b, "out");
    patch<uint64_t>(b, name + 3 + 4 + 8 + 4, 1ull << 50);
    EXPECT_FORMAT_ERROR(b, "lies outside the data section");
  }
  {
    auto b = full;
    b[0] = 'G', b[1] = 'G', b[2] = 'M', b[3] = 'L';
    EXPECT_FORMAT_ERROR(b, "not a GGUF file");
  }
  for (uint32_t v : {0u, 1u, 4u, 0x03000000u}) {
    auto b = full;
    patch<uint32_t>(b, 4, v);
    EXPECT_FORMAT_ERROR(b, v == 0x03000000u ? "big-endian" : "version");
  }
}

TEST(GgufCorrupt, HandMadeFilesWithBadMetadata) {
  // Duplicate key.
  EXPECT_FORMAT_ERROR(GgufBytes().header(0, 2).kv_u32("k", 1).kv_u32("k", 2).bytes,
                      "duplicate metadata 'k'");
  // A bool byte that is neither 0 nor 1.
  EXPECT_FORMAT_ERROR(GgufBytes().header(0, 1).str("flag").u32(7).u8(2).bytes,
                      "bool byte 2");
  // general.alignment: zero, not a power of two, wrong type.
  EXPECT_FORMAT_ERROR(GgufBytes().header(0, 1).kv_u32("general.alignment", 0).bytes,
                      "power of two");
  EXPECT_FORMAT_ERROR(GgufBytes().header(0, 1).kv_u32("general.alignment", 48).bytes,
                      "power of two");
  EXPECT_FORMAT_ERROR(GgufBytes().header(0, 1).str("general.alignment").u32(5).i32(64).bytes,
                      "expected u32");
  // Duplicate tensor names.
  auto dup = GgufBytes().header(2, 0);
  dup.str("t").u32(1).u64(8).u32(0).u64(0);
  dup.str("t").u32(1).u64(8).u32(0).u64(32);
  dup.pad_to(32).zeros(64);
  EXPECT_FORMAT_ERROR(dup.bytes, "duplicate tensor 't'");
  // Data section cut off.
  auto cut = GgufBytes().header(1, 0);
  cut.str("t").u32(2).u64(8).u64(8).u32(0).u64(0);
  cut.pad_to(32).zeros(100);
  EXPECT_FORMAT_ERROR(cut.bytes, "lies outside the data section of 100 bytes");
  // Too short to hold a header.
  EXPECT_FORMAT_ERROR(GgufBytes().raw("GG").bytes, "only 2 bytes");
  EXPECT_FORMAT_ERROR(GgufBytes().raw("GGUF").u32(3).u64(0).bytes, "file truncated");
  // Custom alignment is honoured for tensor offsets.
  auto aligned = GgufBytes().header(1, 1).kv_u32("general.alignment", 64);
  aligned.str("t").u32(1).u64(4).u32(0).u64(0);
  aligned.pad_to(64).zeros(64);
  GgufFile f = GgufFile::from_bytes(aligned.bytes);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
}

TEST(GgufCorrupt, RandomMutationsNeverEscapeAsAnythingButFormatError) {
  const std::vector<uint8_t> full = small_file();
  std::mt19937 rng(1234);
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto b = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: b[at] = static_cast<uint8_t>(rng()); break;
        default: b[at] = 0xff; break;
      }
    }
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    const std::string msg = parse_error(b);
    if (msg == "<parsed>") {
      ++parsed;
    } else {
      ASSERT_EQ(msg.rfind("bad.gguf: ", 0), 0u) << msg;
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 100);
  EXPECT_GT(parsed, 10) << "flips inside tensor data or string bytes leave a valid file";
}

}  // namespace
}  // namespace nvhcq::llm
