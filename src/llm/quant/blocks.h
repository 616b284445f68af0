#pragma once
// Block layouts of ggml's quantized formats, byte for byte: a tensor row of a
// quantized type is an array of these blocks, exactly as GGUF files store them.
// Half-precision fields are raw IEEE binary16 bits (see half.h).

#include <cstdint>

namespace nvhcq::llm {

constexpr int kQK4_0 = 32;  // elements per block of the 32-element formats
constexpr int kQK4_1 = 32;
constexpr int kQK5_0 = 32;
constexpr int kQK5_1 = 32;
constexpr int kQK8_0 = 32;
constexpr int kQK8_1 = 32;
constexpr int kQK_K = 256;        // elements per super-block of the K formats
constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q4_K/Q5_K

// x = d * (q - 8), q in [0, 15]; element j in the low nibble of qs[j], element
// j + 16 in the high nibble.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK4_0 / 2];
};

// x = d * q + m, q in [0, 15]; nibble order as Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK4_1 / 2];
};

// x = d * (q - 16), q in [0, 31]: nibbles as Q4_0, bit 4 of element j is bit j
// of the little-endian 32-bit word qh.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK5_0 / 2];
};

// x = d * q + m, q in [0, 31]; bits as Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK5_1 / 2];
};

// x = d * q, q in [-127, 127].
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK8_0];
};

// Q8_0 plus s = d * sum(q): the activation format of Q4_1/Q5_1 dot products.
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK8_1];
};

// 16 sub-blocks of 16: x = d * (scales[i] & 15) * q - dmin * (scales[i] >> 4),
// q in [0, 3]. Element e lives in qs[32 * (e / 128) + e % 32] at bit 2 * ((e % 128) / 32).
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16: x = d * (s - 32) * (q - 4), s a 6-bit scale, q in [0, 7]:
// 2 low bits laid out as in Q2_K, the high bit of element e is bit
// (e / 32) of hmask[e % 32].
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};

// 8 sub-blocks of 32: x = d * sc * q - dmin * m, 6-bit sc and m, q in [0, 15].
// Element 64 * c + l (l < 32) is the low nibble of qs[32 * c + l], element
// 64 * c + 32 + l its high nibble.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQK_K / 2];
};

// Q4_K with a fifth bit: bit (e / 32) of qh[e % 32].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};

// 16 sub-blocks of 16: x = d * scales[e / 16] * (q - 32), q in [0, 63]: 4 low bits
// in ql, 2 high bits in qh (see dequantize_row_q6_k for the interleave).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};

// The activation format of K-format dot products: float scale, int8 values and
// the sums of each group of 16 values.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};

// Sizes as in ggml (and llm/ggml_type.h's table; the tests check both agree).
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
// Blocks are read in place from mmap'd files, so none may need more than
// 2-byte alignment (GGUF aligns tensor data to 32 bytes, blocks follow back to back).
static_assert(alignof(BlockQ4_0) <= 2 && alignof(BlockQ6_K) <= 2 && alignof(BlockQ2_K) <= 2);

}  // namespace nvhcq::llm
