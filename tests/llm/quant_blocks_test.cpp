// Hand-built blocks of every format dequantize to known values. The blocks are
// packed here from the layout as documented (blocks.h, ggml's block_* structs),
// independently of the library's packing code.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/error.h"
#include "llm/ggml_type.h"
#include "llm/quant/blocks.h"
#include "llm/quant/half.h"
#include "llm/quant/quant_registry.h"
#include "llm/quant/quant_rows.h"

namespace nvhcq::llm {
namespace {

constexpr uint16_t kHalfOne = 0x3c00, kHalfHalf = 0x3800, kHalfQuarter = 0x3400,
                   kHalfEighth = 0x3000, kHalfMinusOne = 0xbc00, kHalfTwo = 0x4000;

template <typename Block, typename Fn>
std::vector<float> dequant(const Block& b, Fn fn, int n) {
  std::vector<float> out(n, -12345.0f);  // poison
  fn(&b, out.data(), n);
  return out;
}

TEST(QuantBlocks, SizesAgreeWithTypeTable) {
  EXPECT_EQ(sizeof(BlockQ4_0), traits(GgmlType::Q4_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ4_1), traits(GgmlType::Q4_1).block_bytes);
  EXPECT_EQ(sizeof(BlockQ5_0), traits(GgmlType::Q5_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ5_1), traits(GgmlType::Q5_1).block_bytes);
  EXPECT_EQ(sizeof(BlockQ8_0), traits(GgmlType::Q8_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ8_1), traits(GgmlType::Q8_1).block_bytes);
  EXPECT_EQ(sizeof(BlockQ2_K), traits(GgmlType::Q2_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ3_K), traits(GgmlType::Q3_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ4_K), traits(GgmlType::Q4_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ5_K), traits(GgmlType::Q5_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ6_K), traits(GgmlType::Q6_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ8_K), traits(GgmlType::Q8_K).block_bytes);
  for (GgmlType t :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
        GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q2_K,
        GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K}) {
    const QuantOps& ops = quant_ops(t);
    EXPECT_EQ(ops.block_bytes, traits(t).block_bytes) << traits(t).name;
    EXPECT_EQ(ops.block_elements, traits(t).block_elements) << traits(t).name;
  }
  // Field offsets that files depend on.
  EXPECT_EQ(offsetof(BlockQ2_K, d), 80u);
  EXPECT_EQ(offsetof(BlockQ3_K, scales), 96u);
  EXPECT_EQ(offsetof(BlockQ4_K, qs), 16u);
  EXPECT_EQ(offsetof(BlockQ5_K, qs), 48u);
  EXPECT_EQ(offsetof(BlockQ6_K, scales), 192u);
  EXPECT_EQ(offsetof(BlockQ8_K, bsums), 260u);
}

TEST(QuantBlocks, Q4_0) {
  BlockQ4_0 b{};
  b.d = kHalfHalf;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = dequant(b, dequantize_row_q4_0, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;       // low nibbles: elements 0..15
    EXPECT_EQ(y[j + 16], (7 - j) * 0.5f) << j;  // high nibbles: elements 16..31
  }
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 3.5f);
}

TEST(QuantBlocks, Q4_1) {
  BlockQ4_1 b{};
  b.d = kHalfQuarter;
  b.m = kHalfMinusOne;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (j << 4));
  const auto y = dequant(b, dequantize_row_q4_1, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 0.25f - 1.0f);
    EXPECT_EQ(y[j + 16], j * 0.25f - 1.0f);
  }
}

TEST(QuantBlocks, Q5_0AndQ5_1) {
  BlockQ5_0 b{};
  b.d = kHalfOne;
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  for (int e = 0; e < 32; e += 3) qh |= 1u << e;  // fifth bit on elements 0, 3, 6, ...
  std::memcpy(b.qh, &qh, 4);                      // little-endian word (x86)
  const auto y = dequant(b, dequantize_row_q5_0, 32);
  for (int e = 0; e < 32; ++e) {
    const int nibble = e < 16 ? e : 15 - (e - 16);
    const int level = nibble | ((e % 3 == 0) ? 16 : 0);
    EXPECT_EQ(y[e], static_cast<float>(level - 16)) << e;
  }
  EXPECT_EQ(y[0], 0.0f);    // 0 | 16 - 16
  EXPECT_EQ(y[1], -15.0f);  // 1 - 16
  EXPECT_EQ(y[30], 1.0f);   // high nibble of qs[14] is 1, fifth bit set: 17 - 16
  BlockQ5_1 c{};
  c.d = kHalfHalf;
  c.m = kHalfTwo;
  std::memcpy(c.qs, b.qs, 16);
  std::memcpy(c.qh, b.qh, 4);
  const auto z = dequant(c, dequantize_row_q5_1, 32);
  for (int e = 0; e < 32; ++e) {
    const int nibble = e < 16 ? e : 15 - (e - 16);
    const int level = nibble | ((e % 3 == 0) ? 16 : 0);
    EXPECT_EQ(z[e], level * 0.5f + 2.0f) << e;
  }
}

TEST(QuantBlocks, Q8_0AndQ8_1AndQ8_K) {
  BlockQ8_0 b{};
  b.d = kHalfEighth;
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(4 * j - 127);
  const auto y = dequant(b, dequantize_row_q8_0, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (4 * j - 127) * 0.125f);
  BlockQ8_1 c{};
  c.d = kHalfEighth;
  std::memcpy(c.qs, b.qs, 32);
  EXPECT_EQ(dequant(c, dequantize_row_q8_1, 32), y);
  BlockQ8_K k{};
  k.d = 0.75f;
  for (int j = 0; j < 256; ++j) k.qs[j] = static_cast<int8_t>(j % 255 - 127);
  const auto z = dequant(k, dequantize_row_q8_k, 256);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(z[j], 0.75f * (j % 255 - 127));
}

// 2-bit fields of Q2_K/Q3_K: element e at bits 2 * ((e % 128) / 32) of qs[32 * (e / 128) + e % 32].
void put_2bit(uint8_t* qs, int e, int v) {
  qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>(v << (2 * ((e % 128) / 32)));
}

TEST(QuantBlocks, Q2_K) {
  BlockQ2_K b{};
  b.d = kHalfHalf;
  b.dmin = kHalfQuarter;
  for (int g = 0; g < 16; ++g) b.scales[g] = static_cast<uint8_t>((g % 16) | ((15 - g) << 4));
  for (int e = 0; e < 256; ++e) put_2bit(b.qs, e, (e * 7 + e / 16) % 4);
  const auto y = dequant(b, dequantize_row_q2_k, 256);
  for (int e = 0; e < 256; ++e) {
    const int g = e / 16;
    const float expect = 0.5f * g * ((e * 7 + e / 16) % 4) - 0.25f * (15 - g);
    ASSERT_EQ(y[e], expect) << e;
  }
  EXPECT_EQ(y[0], -3.75f);  // scale 0, min 15: 0.5 * 0 * q - 0.25 * 15
}

TEST(QuantBlocks, Q3_K) {
  BlockQ3_K b{};
  b.d = kHalfQuarter;
  int scale[16];
  for (int g = 0; g < 16; ++g) {
    scale[g] = (g * 5) % 64;  // stored 6-bit value; the effective scale is value - 32
    const int low = scale[g] & 15, high = scale[g] >> 4;
    if (g < 8)
      b.scales[g] |= static_cast<uint8_t>(low);
    else
      b.scales[g - 8] |= static_cast<uint8_t>(low << 4);
    b.scales[8 + g % 4] |= static_cast<uint8_t>(high << (2 * (g / 4)));
  }
  for (int e = 0; e < 256; ++e) {
    const int level = (e * 3) % 8;  // 0..7, stored as low 2 bits + high bit
    put_2bit(b.qs, e, level & 3);
    if (level & 4) b.hmask[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
  }
  const auto y = dequant(b, dequantize_row_q3_k, 256);
  for (int e = 0; e < 256; ++e) {
    const float expect = 0.25f * (scale[e / 16] - 32) * ((e * 3) % 8 - 4);
    ASSERT_EQ(y[e], expect) << e;
  }
  EXPECT_EQ(y[1], 0.25f * (0 - 32) * (3 - 4));
}

// 6-bit scales and mins of Q4_K/Q5_K, packed per the documented layout.
void put_scales_k4(uint8_t* q, const int* sc, const int* m) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      q[j] |= static_cast<uint8_t>(sc[j]);
      q[j + 4] |= static_cast<uint8_t>(m[j]);
    } else {
      q[j + 4] |= static_cast<uint8_t>((sc[j] & 15) | ((m[j] & 15) << 4));
      q[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      q[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

TEST(QuantBlocks, Q4_KAndQ5_K) {
  const int sc[8] = {1, 63, 17, 32, 5, 48, 63, 33};
  const int m[8] = {0, 7, 63, 20, 61, 2, 40, 63};
  BlockQ4_K b{};
  b.d = kHalfEighth;
  b.dmin = kHalfQuarter;
  put_scales_k4(b.scales, sc, m);
  auto level4 = [](int e) { return (e * 11 + e / 32) % 16; };
  for (int e = 0; e < 256; ++e) {
    // element 64c + l: low nibble of qs[32c + l]; 64c + 32 + l: its high nibble
    const int c = e / 64, l = e % 32, high = (e % 64) / 32;
    b.qs[32 * c + l] |= static_cast<uint8_t>(level4(e) << (4 * high));
  }
  const auto y = dequant(b, dequantize_row_q4_k, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32;
    ASSERT_EQ(y[e], 0.125f * sc[j] * level4(e) - 0.25f * m[j]) << e;
  }
  BlockQ5_K c{};
  c.d = b.d;
  c.dmin = b.dmin;
  std::memcpy(c.scales, b.scales, 12);
  std::memcpy(c.qs, b.qs, 128);
  for (int e = 0; e < 256; e += 5) c.qh[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
  const auto z = dequant(c, dequantize_row_q5_k, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32;
    const int level = level4(e) + (e % 5 == 0 ? 16 : 0);
    ASSERT_EQ(z[e], 0.125f * sc[j] * level - 0.25f * m[j]) << e;
  }
}

TEST(QuantBlocks, Q6_K) {
  BlockQ6_K b{};
  b.d = kHalfEighth;
  for (int g = 0; g < 16; ++g) b.scales[g] = static_cast<int8_t>(g * 17 - 128);
  auto level = [](int e) { return (e * 13 + 7) % 64; };  // stored level; value level - 32
  for (int e = 0; e < 256; ++e) {
    // Per half of 128: runs of 32 r = 0..3; run r's low nibble in ql[(r & 1) * 32 + l]
    // (low nibble for r < 2, high for r >= 2), its 2 high bits at bits 2r of qh[l].
    const int h = e / 128, r = (e % 128) / 32, l = e % 32;
    b.ql[64 * h + 32 * (r & 1) + l] |= static_cast<uint8_t>((level(e) & 15) << (r >= 2 ? 4 : 0));
    b.qh[32 * h + l] |= static_cast<uint8_t>((level(e) >> 4) << (2 * r));
  }
  const auto y = dequant(b, dequantize_row_q6_k, 256);
  for (int e = 0; e < 256; ++e) {
    ASSERT_EQ(y[e], 0.125f * (e / 16 * 17 - 128) * (level(e) - 32)) << e;
  }
}

// Data on a format's grid comes back exactly from quantize + dequantize.
TEST(QuantBlocks, GridDataQuantizesExactly) {
  float x[32];
  // Q4_0: the extreme value -4 sets d = -4 / -8 = 0.5; all values are multiples of it in [-4, 3.5].
  for (int j = 0; j < 32; ++j) x[j] = ((j * 5) % 16 - 8) * 0.5f;
  x[7] = -4.0f;
  BlockQ4_0 q4{};
  quantize_row_q4_0(x, &q4, 32);
  EXPECT_EQ(q4.d, kHalfHalf);
  EXPECT_EQ(dequant(q4, dequantize_row_q4_0, 32), std::vector<float>(x, x + 32));
  // Q5_0: extreme -16 * 0.25.
  for (int j = 0; j < 32; ++j) x[j] = ((j * 7) % 32 - 16) * 0.25f;
  x[3] = -4.0f;
  BlockQ5_0 q5{};
  quantize_row_q5_0(x, &q5, 32);
  EXPECT_EQ(dequant(q5, dequantize_row_q5_0, 32), std::vector<float>(x, x + 32));
  // Q4_1 / Q5_1: min -1, step 0.25 (Q4_1: levels 0..15 with both ends present).
  for (int j = 0; j < 32; ++j) x[j] = -1.0f + 0.25f * ((j * 3) % 16);
  x[0] = -1.0f;
  x[1] = -1.0f + 0.25f * 15;
  BlockQ4_1 q41{};
  quantize_row_q4_1(x, &q41, 32);
  EXPECT_EQ(dequant(q41, dequantize_row_q4_1, 32), std::vector<float>(x, x + 32));
  for (int j = 0; j < 32; ++j) x[j] = -1.0f + 0.25f * ((j * 3) % 32);
  x[0] = -1.0f;
  x[1] = -1.0f + 0.25f * 31;
  BlockQ5_1 q51{};
  quantize_row_q5_1(x, &q51, 32);
  EXPECT_EQ(dequant(q51, dequantize_row_q5_1, 32), std::vector<float>(x, x + 32));
  // Q8_0: amax 127 * 2^-3 gives d = 0.125 exactly.
  for (int j = 0; j < 32; ++j) x[j] = ((j * 37) % 255 - 127) * 0.125f;
  x[5] = 127 * 0.125f;
  BlockQ8_0 q8{};
  quantize_row_q8_0(x, &q8, 32);
  EXPECT_EQ(q8.d, kHalfEighth);
  EXPECT_EQ(dequant(q8, dequantize_row_q8_0, 32), std::vector<float>(x, x + 32));
  // Q8_1 carries s = d * sum(q).
  BlockQ8_1 q81{};
  quantize_row_q8_1(x, &q81, 32);
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += q81.qs[j];
  EXPECT_EQ(fp16_to_fp32(q81.s), fp16_to_fp32(fp32_to_fp16(sum * 0.125f)));
}

TEST(QuantBlocks, PartialBlocksAndUnsupportedTypesAreRejected) {
  float x[64] = {1.0f};
  BlockQ4_0 q[2];
  EXPECT_THROW(quantize_row_q4_0(x, q, 33), FormatError);
  EXPECT_THROW(dequantize_row_q4_0(q, x, 16), FormatError);
  BlockQ4_K k;
  EXPECT_THROW(quantize_row_q4_k(x, &k, 64), FormatError);
  EXPECT_THROW(quantize_row(GgmlType::Q6_K, x, &k, 128), FormatError);
  EXPECT_THROW(quant_ops(GgmlType::IQ2_XXS), FormatError);
  EXPECT_THROW(quant_ops(GgmlType::I32), FormatError);
  EXPECT_EQ(find_quant_ops(GgmlType::IQ4_NL), nullptr);
  EXPECT_THROW(dequantize_row(GgmlType::F16, x, x, -1), FormatError);
  try {
    quant_ops(GgmlType::IQ3_S);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("iq3_s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nvhcq::llm
