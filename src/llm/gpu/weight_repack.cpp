#include "llm/gpu/weight_repack.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <string>

#include "base/error.h"
#include "kernels/llm_formats.cuh"
#include "llm/quant/blocks.h"
#include "llm/quant/kquant_scales.h"

namespace nvhcq::llm {
namespace {

constexpr int kQs = static_cast<int>(GpuArray::kQs);
constexpr int kQh = static_cast<int>(GpuArray::kQh);
constexpr int kScales = static_cast<int>(GpuArray::kScales);
constexpr int kSuper = static_cast<int>(GpuArray::kSuper);

uint16_t load_u16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Packs 32 values q[j] (their low 4 bits) into a group's 16 nibble bytes.
void pack_nibbles(const uint8_t* q, uint8_t* out) {
  for (int b = 0; b < 16; ++b) out[b] = static_cast<uint8_t>((q[b] & 15) | ((q[b + 16] & 15) << 4));
}

// Bit 4 of 32 values into a Q5 group's qh word.
uint32_t pack_bit4(const uint8_t* q) {
  uint32_t h = 0;
  for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((q[j] >> 4) & 1) << ((j >> 2) + 8 * (j & 3));
  return h;
}

// Bits 4-5 of 16 values into one of a Q6 group's two qh words.
uint32_t pack_bits45(const uint8_t* q) {
  uint32_t h = 0;
  for (int k = 0; k < 16; ++k) h |= static_cast<uint32_t>((q[k] >> 4) & 3) << (2 * (k >> 2) + 8 * (k & 3));
  return h;
}

// The 32-element formats: one GGUF block is one group.
void repack_q4_0(const uint8_t* src, int64_t groups, uint8_t* const* a) {
  for (int64_t g = 0; g < groups; ++g) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(src + g * sizeof(BlockQ4_0));
    std::memcpy(a[kQs] + g * 16, b->qs, 16);
    store_u16(a[kScales] + g * 2, load_u16(&b->d));
  }
}

void repack_q4_1(const uint8_t* src, int64_t groups, uint8_t* const* a) {
  for (int64_t g = 0; g < groups; ++g) {
    const auto* b = reinterpret_cast<const BlockQ4_1*>(src + g * sizeof(BlockQ4_1));
    std::memcpy(a[kQs] + g * 16, b->qs, 16);
    store_u32(a[kScales] + g * 4, load_u16(&b->d) | static_cast<uint32_t>(load_u16(&b->m)) << 16);
  }
}

// Bit j of ggml's Q5 qh word is bit 4 of element j.
uint32_t q5_high_bits(const uint8_t* qh_bytes) {
  const uint32_t src = load_u32(qh_bytes);
  uint8_t q[32];
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>(((src >> j) & 1) << 4);
  return pack_bit4(q);
}

void repack_q5_0(const uint8_t* src, int64_t groups, uint8_t* const* a) {
  for (int64_t g = 0; g < groups; ++g) {
    const auto* b = reinterpret_cast<const BlockQ5_0*>(src + g * sizeof(BlockQ5_0));
    std::memcpy(a[kQs] + g * 16, b->qs, 16);
    store_u32(a[kQh] + g * 4, q5_high_bits(b->qh));
    store_u16(a[kScales] + g * 2, load_u16(&b->d));
  }
}

void repack_q5_1(const uint8_t* src, int64_t groups, uint8_t* const* a) {
  for (int64_t g = 0; g < groups; ++g) {
    const auto* b = reinterpret_cast<const BlockQ5_1*>(src + g * sizeof(BlockQ5_1));
    std::memcpy(a[kQs] + g * 16, b->qs, 16);
    store_u32(a[kQh] + g * 4, q5_high_bits(b->qh));
    store_u32(a[kScales] + g * 4, load_u16(&b->d) | static_cast<uint32_t>(load_u16(&b->m)) << 16);
  }
}

void repack_q8_0(const uint8_t* src, int64_t groups, uint8_t* const* a) {
  for (int64_t g = 0; g < groups; ++g) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(src + g * sizeof(BlockQ8_0));
    std::memcpy(a[kQs] + g * 32, b->qs, 32);
    store_u16(a[kScales] + g * 2, load_u16(&b->d));
  }
}

// Q4_K/Q5_K: element 64c + l of a super-block is the low nibble of qs[32c + l]
// (l < 32) or the high nibble of qs[32c + l - 32]; the 5th bit of element e is
// bit e / 32 of qh[e % 32].
template <bool kFive>
void repack_k4(const uint8_t* src, int64_t supers, uint8_t* const* a) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  uint8_t q[32];
  for (int64_t s = 0; s < supers; ++s) {
    const auto* b = reinterpret_cast<const Block*>(src + s * sizeof(Block));
    store_u32(a[kSuper] + s * 4, load_u16(&b->d) | static_cast<uint32_t>(load_u16(&b->dmin)) << 16);
    for (int j = 0; j < 8; ++j) {
      const int64_t g = s * 8 + j;
      const uint8_t* nib = b->qs + 32 * (j / 2);
      for (int l = 0; l < 32; ++l) {
        int v = (j % 2 == 0) ? (nib[l] & 15) : (nib[l] >> 4);
        if constexpr (kFive) v |= ((b->qh[l] >> j) & 1) << 4;
        q[l] = static_cast<uint8_t>(v);
      }
      pack_nibbles(q, a[kQs] + g * 16);
      if constexpr (kFive) store_u32(a[kQh] + g * 4, pack_bit4(q));
      uint8_t sc, m;
      detail::scale_min_k4(j, b->scales, &sc, &m);
      store_u16(a[kScales] + g * 2, static_cast<uint16_t>(sc | (m << 8)));
    }
  }
}

// Q6_K (ggml's dequantize_row_q6_K): in each half n of 128 elements, element
// 128n + l + 32k (l < 32, k < 4) takes nibble k/2 of ql[64n + l + 32(k%2)] and
// bits 2k..2k+1 of qh[32n + l]; its scale is scales[e / 16].
void repack_q6_k(const uint8_t* src, int64_t supers, uint8_t* const* a) {
  uint8_t q[256];
  for (int64_t s = 0; s < supers; ++s) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(src + s * sizeof(BlockQ6_K));
    for (int n = 0; n < 2; ++n) {
      for (int l = 0; l < 32; ++l) {
        for (int k = 0; k < 4; ++k) {
          const uint8_t ql = b->ql[64 * n + l + 32 * (k % 2)];
          const int low = (k < 2) ? (ql & 15) : (ql >> 4);
          const int high = (b->qh[32 * n + l] >> (2 * k)) & 3;
          q[128 * n + l + 32 * k] = static_cast<uint8_t>(low | (high << 4));
        }
      }
    }
    store_u16(a[kSuper] + s * 2, load_u16(&b->d));
    for (int j = 0; j < 8; ++j) {
      const int64_t g = s * 8 + j;
      pack_nibbles(q + 32 * j, a[kQs] + g * 16);
      store_u32(a[kQh] + g * 8, pack_bits45(q + 32 * j));
      store_u32(a[kQh] + g * 8 + 4, pack_bits45(q + 32 * j + 16));
      a[kScales][g * 2] = static_cast<uint8_t>(b->scales[2 * j]);
      a[kScales][g * 2 + 1] = static_cast<uint8_t>(b->scales[2 * j + 1]);
    }
  }
}

}  // namespace

std::optional<int> gpu_format_for(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0: return kGpuQ4_0;
    case GgmlType::Q4_1: return kGpuQ4_1;
    case GgmlType::Q5_0: return kGpuQ5_0;
    case GgmlType::Q5_1: return kGpuQ5_1;
    case GgmlType::Q8_0: return kGpuQ8_0;
    case GgmlType::Q4_K: return kGpuQ4_K;
    case GgmlType::Q5_K: return kGpuQ5_K;
    case GgmlType::Q6_K: return kGpuQ6_K;
    case GgmlType::F16: return kGpuF16;
    case GgmlType::BF16: return kGpuBF16;
    case GgmlType::F32: return kGpuF32;
    default: return std::nullopt;
  }
}

GpuMatrixLayout gpu_matrix_layout(GgmlType type, int64_t rows, int64_t cols) {
  auto format = gpu_format_for(type);
  if (!format) {
    throw FormatError("weights of type " + std::string(traits(type).name) +
                      " have no GPU kernels (convert the model with `nvhcq quantize`, or run it with "
                      "--backend cpu)");
  }
  // Activations are quantized in groups of 32 whatever the weights, and K formats
  // need whole super-blocks.
  const int64_t unit = std::max<int64_t>(traits(type).block_elements, LLM_GROUP);
  if (rows < 0 || cols <= 0 || cols % unit != 0) {
    throw FormatError("a " + std::string(traits(type).name) + " matrix with rows of " + std::to_string(cols) +
                      " values cannot be laid out for the GPU");
  }
  GpuMatrixLayout l;
  l.format = *format;
  l.rows = rows;
  l.cols = cols;
  for (int a = 0; a < kGpuArrayCount; ++a) l.row_bytes[a] = llm_row_bytes(l.format, cols, a);
  return l;
}

void repack_rows(GgmlType type, const GpuMatrixLayout& layout, const uint8_t* src, int64_t n_rows,
                 const RepackTarget& dst) {
  const uint64_t src_row = ggml_row_bytes(type, static_cast<uint64_t>(layout.cols));
  const int64_t groups = layout.cols / LLM_GROUP, supers = layout.cols / LLM_SUPER;
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint8_t* s = src + static_cast<uint64_t>(r) * src_row;
    uint8_t* a[kGpuArrayCount];
    for (int i = 0; i < kGpuArrayCount; ++i) {
      a[i] = dst.array[i] != nullptr ? dst.array[i] + static_cast<uint64_t>(r) * layout.row_bytes[i] : nullptr;
    }
    switch (layout.format) {
      case kGpuQ4_0: repack_q4_0(s, groups, a); break;
      case kGpuQ4_1: repack_q4_1(s, groups, a); break;
      case kGpuQ5_0: repack_q5_0(s, groups, a); break;
      case kGpuQ5_1: repack_q5_1(s, groups, a); break;
      case kGpuQ8_0: repack_q8_0(s, groups, a); break;
      case kGpuQ4_K: repack_k4<false>(s, supers, a); break;
      case kGpuQ5_K: repack_k4<true>(s, supers, a); break;
      case kGpuQ6_K: repack_q6_k(s, supers, a); break;
      default: std::memcpy(a[kQs], s, src_row); break;
    }
  }
}

}  // namespace nvhcq::llm
