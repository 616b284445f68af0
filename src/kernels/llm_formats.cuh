// The GPU layouts of LLM weight matrices and the arithmetic on them, shared by
// the kernels (NVRTC) and the host (the repacker and its tests include this file
// as C++), so the layout is written down once.
//
// GGUF blocks are 18 to 210 bytes long and only 2-byte aligned: a GPU cannot
// load them with wide, coalesced accesses. At upload every quantized matrix is
// repacked into arrays of fixed-size "groups" of 32 consecutive weights of a row:
//
//   qs      16 B per group: 4-bit values; byte b holds weight b in its low nibble
//           and weight b + 16 in its high nibble (Q8_0: 32 B of int8 instead).
//           Word i (bytes 4i..4i+3) thus holds weights 4i..4i+3 (low nibbles)
//           and 16+4i..16+4i+3 (high nibbles): one dp4a each after a mask.
//   qh      the bits above the nibble. Q5_0/Q5_1/Q5_K: one u32 per group, where
//           (qh >> w) & 0x01010101 puts the 5th bit of weights 4w..4w+3 in the
//           bytes' bit 0 (w = 0..7). Q6_K: two u32 per group (weights 0..15 and
//           16..31), where (h >> 2w) & 0x03030303 gives bits 4-5 of weights
//           4w..4w+3 of that half (w = 0..3).
//   scales  per group: Q4_0/Q5_0/Q8_0 an f16 d; Q4_1/Q5_1 an f16 pair (d, m);
//           Q4_K/Q5_K a u16 (6-bit scale | 6-bit min << 8); Q6_K two int8
//           scales (weights 0..15 and 16..31).
//   super   per 256 weights: Q4_K/Q5_K an f16 pair (d, dmin); Q6_K an f16 d.
//
// Group g of row r is element r * groups_per_row + g of every array, so a warp
// whose lanes take consecutive groups reads each array contiguously. F16, BF16
// and F32 matrices stay row-major as they are.
//
// Activations are quantized the way the CPU path quantizes them (llm/quant), so
// GPU and CPU take the same integer dot products:
//   kActQ8x32  (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 weights): int8 per weight, per group
//              d = f16(amax / 127), the integer sum of the group, and
//              s = f16(d_exact * sum) (ggml's Q8_0 / Q8_1);
//   kActQ8K    (Q4_K, Q5_K, Q6_K): int8 per weight, per 256 a float d, and the
//              integer sums of each 16 (ggml's Q8_K);
//   kActF16 / kActBF16 / kActF32: the activation rounded to the weight's type.
#pragma once

#if defined(__CUDACC__)
#include "common.cuh"
#define LLM_HD __device__ __forceinline__
#define LLM_UNROLL _Pragma("unroll")
#else
#include <cmath>
#include <cstdint>
#include <cstring>
#define LLM_HD inline
#define LLM_UNROLL
#endif

#define LLM_GROUP 32
#define LLM_SUPER 256
#define LLM_GROUPS_PER_SUPER 8
// Segments (matrices sharing one activation vector) per matrix-vector launch.
#define LLM_MAX_SEGMENTS 3

enum LlmGpuFormat {
  kGpuQ4_0 = 1,
  kGpuQ4_1 = 2,
  kGpuQ5_0 = 3,
  kGpuQ5_1 = 4,
  kGpuQ8_0 = 5,
  kGpuQ4_K = 6,
  kGpuQ5_K = 7,
  kGpuQ6_K = 8,
  kGpuF16 = 9,
  kGpuBF16 = 10,
  kGpuF32 = 11,
};

enum LlmActKind {
  kActQ8x32 = 0,
  kActQ8K = 1,
  kActF16 = 2,
  kActBF16 = 3,
  kActF32 = 4,
};

// One repacked matrix of `rows` x `cols` on the GPU (addresses of its arrays;
// unused ones are 0). 48 bytes, the same on host and device.
struct LlmGpuMatrix {
  uint64_t qs;
  uint64_t qh;
  uint64_t scales;
  uint64_t super;
  int32_t format;
  int32_t rows;
  int32_t cols;
  int32_t reserved;
};

// RMSNorm's scale 1 / sqrt(mean(x^2) + eps) from the sum of squares of n
// values (summed in double), in float arithmetic: the CPU path and the kernels
// take it from here, so both round alike. (In double, its division and square
// root were a chain of double-precision steps at the head of every normalized
// preparation, and their slow paths 5-6 KB of each kernel.)
LLM_HD float llm_rms_scale(double sum_squares, int n, float eps) {
  const float mean = (float)sum_squares / (float)n;
  return 1.0f / sqrtf(mean + eps);
}

// F16/BF16 weights: the prefill products copy their tiles as they are.
LLM_HD bool llm_format_16bit(int format) { return format == kGpuF16 || format == kGpuBF16; }

LLM_HD constexpr int llm_act_kind(int format) {
  switch (format) {
    case kGpuQ4_K:
    case kGpuQ5_K:
    case kGpuQ6_K:
      return kActQ8K;
    case kGpuF16:
      return kActF16;
    case kGpuBF16:
      return kActBF16;
    case kGpuF32:
      return kActF32;
    default:
      return kActQ8x32;
  }
}

// Bytes per row of each array (0: the format has none); `array` is 0 qs,
// 1 qh, 2 scales, 3 super. Host layouts and device prefetches both use it.
LLM_HD uint64_t llm_row_bytes(int format, int64_t cols, int array) {
  const uint64_t groups = static_cast<uint64_t>(cols) / LLM_GROUP;
  const uint64_t supers = static_cast<uint64_t>(cols) / LLM_SUPER;
  switch (format) {
    case kGpuQ4_0: return array == 0 ? 16 * groups : array == 2 ? 2 * groups : 0;
    case kGpuQ4_1: return array == 0 ? 16 * groups : array == 2 ? 4 * groups : 0;
    case kGpuQ5_0: return array == 0 ? 16 * groups : array == 1 ? 4 * groups : array == 2 ? 2 * groups : 0;
    case kGpuQ5_1: return array == 0 ? 16 * groups : array == 1 ? 4 * groups : array == 2 ? 4 * groups : 0;
    case kGpuQ8_0: return array == 0 ? 32 * groups : array == 2 ? 2 * groups : 0;
    case kGpuQ4_K: return array == 0 ? 16 * groups : array == 2 ? 2 * groups : array == 3 ? 4 * supers : 0;
    case kGpuQ5_K:
      return array == 0 ? 16 * groups : array == 1 ? 4 * groups : array == 2 ? 2 * groups : 4 * supers;
    case kGpuQ6_K:
      return array == 0 ? 16 * groups : array == 1 ? 8 * groups : array == 2 ? 2 * groups : 2 * supers;
    case kGpuF16:
    case kGpuBF16: return array == 0 ? 2 * static_cast<uint64_t>(cols) : 0;
    case kGpuF32: return array == 0 ? 4 * static_cast<uint64_t>(cols) : 0;
    default: return 0;
  }
}

// Q8_K activations in shared memory: cols int8 values, a float d per 256, then
// the sums of each 16 from this byte offset, 8-byte aligned so that a group's
// two sums are one 8-byte load (cols / 256 odd would leave them 4 bytes off).
LLM_HD uint32_t llm_q8k_sums_offset(uint32_t cols) { return (cols + (cols / LLM_SUPER) * 4 + 7) / 8 * 8; }

// --- Scalar helpers that exist on both sides -------------------------------

#if defined(__CUDACC__)
LLM_HD float llm_half(uint16_t h) { return half_to_float(h); }
LLM_HD int llm_dp4a(uint32_t a, uint32_t b, int c) {
  int d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
// The same with a's bytes unsigned (0..255).
LLM_HD int llm_dp4a_u8(uint32_t a, uint32_t b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#else
inline float llm_half(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    float mag = static_cast<float>(mant) * 0x1p-24f;
    std::memcpy(&bits, &mag, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant ? 0x00400000u : 0u) | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline int llm_dp4a(uint32_t a, uint32_t b, int c) {
  for (int i = 0; i < 4; ++i) {
    c += static_cast<int8_t>(a >> (8 * i)) * static_cast<int8_t>(b >> (8 * i));
  }
  return c;
}
inline int llm_dp4a_u8(uint32_t a, uint32_t b, int c) {
  for (int i = 0; i < 4; ++i) {
    c += static_cast<int>((a >> (8 * i)) & 0xffu) * static_cast<int8_t>(b >> (8 * i));
  }
  return c;
}
#endif

// SwiGLU's product silu(g) * u, in the one form every kernel applying it uses.
LLM_HD float llm_silu_times(float g, float u) { return g / (1.0f + expf(-g)) * u; }

// Bytes 0..3 of `w` low nibbles / high nibbles, as four bytes 0..15.
LLM_HD uint32_t llm_lo4(uint32_t w) { return w & 0x0F0F0F0Fu; }
LLM_HD uint32_t llm_hi4(uint32_t w) { return (w >> 4) & 0x0F0F0F0Fu; }

// The 32 activation values of a group as eight words: x[0..3] hold values
// 0..15, x[4..7] values 16..31.
struct LlmActGroup {
  uint32_t x[8];
};

// Sum over the 32 weights of a 4-bit group of q * x (q = nibble, 0..15). The
// low and high nibbles are two independent chains of dp4a (integer sums are
// exact in any order), so a GPU has two in flight instead of one of eight. The
// high nibbles are taken in place, as unsigned bytes 16 q (one mask instead of
// a shift and a mask per word), and their sum, a multiple of 16, shifted once.
LLM_HD int llm_dot_nibbles(const uint32_t q[4], const LlmActGroup& a) {
  int lo = 0, hi16 = 0;
LLM_UNROLL
  for (int i = 0; i < 4; ++i) {
    lo = llm_dp4a(llm_lo4(q[i]), a.x[i], lo);
    hi16 = llm_dp4a_u8(q[i] & 0xF0F0F0F0u, a.x[4 + i], hi16);
  }
  return lo + (hi16 >> 4);
}

// Same for 5-bit values: nibble | (bit 4 from qh).
LLM_HD int llm_dot_5bit(const uint32_t q[4], uint32_t qh, const LlmActGroup& a) {
  int s_lo = 0, s_hi = 0;
LLM_UNROLL
  for (int i = 0; i < 4; ++i) {
    uint32_t lo = llm_lo4(q[i]) | (((qh >> i) & 0x01010101u) << 4);
    uint32_t hi = llm_hi4(q[i]) | (((qh >> (4 + i)) & 0x01010101u) << 4);
    s_lo = llm_dp4a(lo, a.x[i], s_lo);
    s_hi = llm_dp4a(hi, a.x[4 + i], s_hi);
  }
  return s_lo + s_hi;
}

// Q6_K: the two 16-weight halves' sums of q * x (q = 0..63).
LLM_HD void llm_dot_6bit(const uint32_t q[4], uint32_t h0, uint32_t h1, const LlmActGroup& a,
                         int* sum_lo, int* sum_hi) {
  int s0 = 0, s1 = 0;
LLM_UNROLL
  for (int i = 0; i < 4; ++i) {
    uint32_t lo = llm_lo4(q[i]) | (((h0 >> (2 * i)) & 0x03030303u) << 4);
    uint32_t hi = llm_hi4(q[i]) | (((h1 >> (2 * i)) & 0x03030303u) << 4);
    s0 = llm_dp4a(lo, a.x[i], s0);
    s1 = llm_dp4a(hi, a.x[4 + i], s1);
  }
  *sum_lo = s0;
  *sum_hi = s1;
}

// --- Per-format group products ----------------------------------------------
// Each returns the contribution of one group of 32 weights to w . x, in the
// operation order of the CPU's vec_dot for that format (integer sums exact).

// Activation group data of kActQ8x32.
struct LlmQ8x32 {
  float d;    // f16-rounded scale
  float s;    // f16(d * sum), Q8_1's s
  int sum;    // integer sum of the 32 values
};

LLM_HD float llm_group_q4_0(const uint32_t q[4], uint16_t d, const LlmActGroup& a, const LlmQ8x32& x) {
  int sumi = llm_dot_nibbles(q, a) - 8 * x.sum;
  return static_cast<float>(sumi) * llm_half(d) * x.d;
}

LLM_HD float llm_group_q4_1(const uint32_t q[4], uint32_t dm, const LlmActGroup& a, const LlmQ8x32& x) {
  int sumi = llm_dot_nibbles(q, a);
  float d = llm_half(static_cast<uint16_t>(dm)), m = llm_half(static_cast<uint16_t>(dm >> 16));
  return (d * x.d) * static_cast<float>(sumi) + m * x.s;
}

LLM_HD float llm_group_q5_0(const uint32_t q[4], uint32_t qh, uint16_t d, const LlmActGroup& a,
                            const LlmQ8x32& x) {
  int sumi = llm_dot_5bit(q, qh, a) - 16 * x.sum;
  return static_cast<float>(sumi) * llm_half(d) * x.d;
}

LLM_HD float llm_group_q5_1(const uint32_t q[4], uint32_t qh, uint32_t dm, const LlmActGroup& a,
                            const LlmQ8x32& x) {
  int sumi = llm_dot_5bit(q, qh, a);
  float d = llm_half(static_cast<uint16_t>(dm)), m = llm_half(static_cast<uint16_t>(dm >> 16));
  return (d * x.d) * static_cast<float>(sumi) + m * x.s;
}

LLM_HD float llm_group_q8_0(const uint32_t q[8], uint16_t d, const LlmActGroup& a, const LlmQ8x32& x) {
  int lo = 0, hi = 0;  // two chains, as in llm_dot_nibbles
LLM_UNROLL
  for (int i = 0; i < 4; ++i) {
    lo = llm_dp4a(q[i], a.x[i], lo);
    hi = llm_dp4a(q[4 + i], a.x[4 + i], hi);
  }
  return static_cast<float>(lo + hi) * llm_half(d) * x.d;
}

// Activation group data of kActQ8K: the super-block's scale and the two sums of 16.
struct LlmQ8K {
  float d;
  int bsum_lo, bsum_hi;
};

// Q4_K/Q5_K: x = d * sc * q - dmin * m, `sm` = sc | m << 8, `dd` = (d, dmin) as f16.
LLM_HD float llm_group_k4(int sumi, uint32_t sm, uint32_t dd, const LlmQ8K& x) {
  float d = llm_half(static_cast<uint16_t>(dd)) * x.d;
  float dmin = llm_half(static_cast<uint16_t>(dd >> 16)) * x.d;
  int sc = static_cast<int>(sm & 0xff), m = static_cast<int>((sm >> 8) & 0xff);
  return d * static_cast<float>(sc * sumi) - dmin * static_cast<float>(m * (x.bsum_lo + x.bsum_hi));
}

LLM_HD float llm_group_q4_k(const uint32_t q[4], uint32_t sm, uint32_t dd, const LlmActGroup& a,
                            const LlmQ8K& x) {
  return llm_group_k4(llm_dot_nibbles(q, a), sm, dd, x);
}

LLM_HD float llm_group_q5_k(const uint32_t q[4], uint32_t qh, uint32_t sm, uint32_t dd,
                            const LlmActGroup& a, const LlmQ8K& x) {
  return llm_group_k4(llm_dot_5bit(q, qh, a), sm, dd, x);
}

// Q6_K: x = d * sc * (q - 32); `sc2` holds the two int8 scales (low byte first).
LLM_HD float llm_group_q6_k(const uint32_t q[4], uint32_t h0, uint32_t h1, uint32_t sc2, uint16_t d,
                            const LlmActGroup& a, const LlmQ8K& x) {
  int s0, s1;
  llm_dot_6bit(q, h0, h1, a, &s0, &s1);
  int sc0 = static_cast<int8_t>(sc2 & 0xff), sc1 = static_cast<int8_t>((sc2 >> 8) & 0xff);
  int sumi = sc0 * (s0 - 32 * x.bsum_lo) + sc1 * (s1 - 32 * x.bsum_hi);
  return llm_half(d) * x.d * static_cast<float>(sumi);
}

// --- Dequantization of one weight (embedding rows, prefill tiles) -----------
// Integer value of weight j (0..31) of a group's nibbles / high bits.

LLM_HD int llm_nibble(const uint32_t q[4], int j) {
  int b = j & 15;
  uint32_t byte = (q[b >> 2] >> (8 * (b & 3))) & 0xffu;
  return j < 16 ? static_cast<int>(byte & 15) : static_cast<int>(byte >> 4);
}

LLM_HD int llm_bit5(uint32_t qh, int j) { return static_cast<int>((qh >> ((j >> 2) + 8 * (j & 3))) & 1u); }

LLM_HD int llm_bits56(uint32_t h0, uint32_t h1, int j) {
  uint32_t h = j < 16 ? h0 : h1;
  int k = j & 15;
  return static_cast<int>((h >> (2 * (k >> 2) + 8 * (k & 3))) & 3u);
}

// Products and sums that the compiler must not fuse into an FMA, where the CPU
// rounds after each operation (dequantization must give the CPU's values).
#if defined(__CUDACC__)
LLM_HD float llm_mul(float a, float b) { return __fmul_rn(a, b); }
LLM_HD float llm_add(float a, float b) { return __fadd_rn(a, b); }
LLM_HD float llm_sub(float a, float b) { return __fsub_rn(a, b); }
LLM_HD float llm_bf16(uint16_t b) { return bf16_to_float(b); }
#else
inline float llm_mul(float a, float b) { return a * b; }
inline float llm_add(float a, float b) { return a + b; }
inline float llm_sub(float a, float b) { return a - b; }
inline float llm_bf16(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
#endif

// One group of a quantized row as loaded: nibbles (Q8_0: 32 bytes of int8),
// the high bits, the group's scale word and its super-block's word.
struct LlmRawGroup {
  uint32_t qs[8];
  uint32_t h0, h1;
  uint32_t sc, sup;
};

// Group g of row r of a quantized matrix, read from `m`'s arrays (device
// addresses in kernels, host addresses in the host tests).
LLM_HD LlmRawGroup llm_load_raw_group(const LlmGpuMatrix& m, int64_t rg) {
  LlmRawGroup raw{};
  const int f = m.format;
  const uint32_t* qs = reinterpret_cast<const uint32_t*>(m.qs) + rg * (f == kGpuQ8_0 ? 8 : 4);
  const int words = f == kGpuQ8_0 ? 8 : 4;
  LLM_UNROLL
  for (int i = 0; i < 8; ++i) {
    if (i < words) raw.qs[i] = qs[i];
  }
  if (f == kGpuQ5_0 || f == kGpuQ5_1 || f == kGpuQ5_K) {
    raw.h0 = reinterpret_cast<const uint32_t*>(m.qh)[rg];
  } else if (f == kGpuQ6_K) {
    raw.h0 = reinterpret_cast<const uint32_t*>(m.qh)[rg * 2];
    raw.h1 = reinterpret_cast<const uint32_t*>(m.qh)[rg * 2 + 1];
  }
  raw.sc = (f == kGpuQ4_1 || f == kGpuQ5_1) ? reinterpret_cast<const uint32_t*>(m.scales)[rg]
                                            : reinterpret_cast<const uint16_t*>(m.scales)[rg];
  if (f == kGpuQ4_K || f == kGpuQ5_K) {
    raw.sup = reinterpret_cast<const uint32_t*>(m.super)[rg / LLM_GROUPS_PER_SUPER];
  } else if (f == kGpuQ6_K) {
    raw.sup = reinterpret_cast<const uint16_t*>(m.super)[rg / LLM_GROUPS_PER_SUPER];
  }
  return raw;
}

// The 32 values of a quantized group, in ggml's dequantization arithmetic. One
// unrolled loop per format, so that a kernel keeps `out` in registers.
LLM_HD void llm_dequant_raw(int format, const LlmRawGroup& raw, float* out) {
  switch (format) {
    case kGpuQ8_0: {
      const float d = llm_half(static_cast<uint16_t>(raw.sc));
      LLM_UNROLL
      for (int j = 0; j < LLM_GROUP; ++j) {
        out[j] = llm_mul(static_cast<float>(static_cast<int8_t>(raw.qs[j >> 2] >> (8 * (j & 3)))), d);
      }
      return;
    }
    case kGpuQ4_0:
    case kGpuQ5_0: {
      const float d = llm_half(static_cast<uint16_t>(raw.sc));
      const bool five = format == kGpuQ5_0;
      LLM_UNROLL
      for (int j = 0; j < LLM_GROUP; ++j) {
        const int q = five ? (llm_nibble(raw.qs, j) | (llm_bit5(raw.h0, j) << 4)) - 16 : llm_nibble(raw.qs, j) - 8;
        out[j] = llm_mul(static_cast<float>(q), d);
      }
      return;
    }
    case kGpuQ4_1:
    case kGpuQ5_1: {
      const float d = llm_half(static_cast<uint16_t>(raw.sc)), m = llm_half(static_cast<uint16_t>(raw.sc >> 16));
      const bool five = format == kGpuQ5_1;
      LLM_UNROLL
      for (int j = 0; j < LLM_GROUP; ++j) {
        const int q = five ? (llm_nibble(raw.qs, j) | (llm_bit5(raw.h0, j) << 4)) : llm_nibble(raw.qs, j);
        out[j] = llm_add(llm_mul(static_cast<float>(q), d), m);
      }
      return;
    }
    case kGpuQ4_K:
    case kGpuQ5_K: {
      const float d1 = llm_mul(llm_half(static_cast<uint16_t>(raw.sup)), static_cast<float>(raw.sc & 0xff));
      const float m1 = llm_mul(llm_half(static_cast<uint16_t>(raw.sup >> 16)), static_cast<float>((raw.sc >> 8) & 0xff));
      const bool five = format == kGpuQ5_K;
      LLM_UNROLL
      for (int j = 0; j < LLM_GROUP; ++j) {
        const int q = five ? (llm_nibble(raw.qs, j) | (llm_bit5(raw.h0, j) << 4)) : llm_nibble(raw.qs, j);
        out[j] = llm_sub(llm_mul(d1, static_cast<float>(q)), m1);
      }
      return;
    }
    default: {  // Q6_K: two scales, one per 16 values
      const float d = llm_half(static_cast<uint16_t>(raw.sup));
      const float s0 = llm_mul(d, static_cast<float>(static_cast<int8_t>(raw.sc & 0xff)));
      const float s1 = llm_mul(d, static_cast<float>(static_cast<int8_t>((raw.sc >> 8) & 0xff)));
      LLM_UNROLL
      for (int j = 0; j < LLM_GROUP; ++j) {
        const int q = (llm_nibble(raw.qs, j) | (llm_bits56(raw.h0, raw.h1, j) << 4)) - 32;
        out[j] = llm_mul(j < 16 ? s0 : s1, static_cast<float>(q));
      }
      return;
    }
  }
}

// The 32 values of group g of row r, in ggml's dequantization arithmetic.
// Addresses in `m` are dereferenced here (device addresses in kernels, host
// addresses in the host tests).
LLM_HD void llm_dequant_group(const LlmGpuMatrix& m, int64_t r, int g, float* out) {
  const int64_t groups = m.cols / LLM_GROUP;
  if (m.format == kGpuF16 || m.format == kGpuBF16 || m.format == kGpuF32) {
    const int64_t base = r * m.cols + static_cast<int64_t>(g) * LLM_GROUP;
    for (int j = 0; j < LLM_GROUP; ++j) {
      if (m.format == kGpuF32) {
        out[j] = reinterpret_cast<const float*>(m.qs)[base + j];
      } else {
        const uint16_t h = reinterpret_cast<const uint16_t*>(m.qs)[base + j];
        out[j] = m.format == kGpuF16 ? llm_half(h) : llm_bf16(h);
      }
    }
    return;
  }
  llm_dequant_raw(m.format, llm_load_raw_group(m, r * groups + g), out);
}
