#include "llm/quant/quant_registry.h"

#include <cstring>
#include <string>

#include "base/error.h"
#include "llm/quant/half.h"
#include "llm/quant/quant_rows.h"
#include "llm/quant/quantize_avx2.h"
#include "llm/quant/simd.h"

namespace nvhcq::llm {
namespace {

// Adapters from the typed row functions to the registry's untyped signatures.
template <typename Block, void (*Fn)(const Block*, float*, int64_t)>
void to_float(const void* src, float* dst, int64_t n) {
  Fn(static_cast<const Block*>(src), dst, n);
}
template <typename Block, void (*Fn)(const float*, Block*, int64_t)>
void from_float(const float* src, void* dst, int64_t n) {
  Fn(src, static_cast<Block*>(dst), n);
}

void f32_to_float(const void* src, float* dst, int64_t n) {
  detail::check_row_length(n, 1, "f32");
  std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
}
void f32_from_float(const float* src, void* dst, int64_t n) {
  detail::check_row_length(n, 1, "f32");
  std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
}
void f16_to_float(const void* src, float* dst, int64_t n) {
  detail::check_row_length(n, 1, "f16");
  fp16_to_fp32_row(static_cast<const uint16_t*>(src), dst, static_cast<size_t>(n));
}
void f16_from_float(const float* src, void* dst, int64_t n) {
  detail::check_row_length(n, 1, "f16");
  fp32_to_fp16_row(src, static_cast<uint16_t*>(dst), static_cast<size_t>(n));
}
void bf16_to_float(const void* src, float* dst, int64_t n) {
  detail::check_row_length(n, 1, "bf16");
  bf16_to_fp32_row(static_cast<const uint16_t*>(src), dst, static_cast<size_t>(n));
}
void bf16_from_float(const float* src, void* dst, int64_t n) {
  detail::check_row_length(n, 1, "bf16");
  fp32_to_bf16_row(src, static_cast<uint16_t*>(dst), static_cast<size_t>(n));
}

struct Entry {
  GgmlType type;
  uint32_t block_elements, block_bytes;
  ToFloatFn to_float;
  FromFloatFn from_float;
  VecDotFn scalar, simd;
  GgmlType vec_dot_type;
  FromFloatFn from_float_simd = nullptr;  // same bytes as from_float, faster
};

constexpr Entry kEntries[] = {
    {GgmlType::F32, 1, 4, f32_to_float, f32_from_float, vec_dot_scalar::f32_f32,
     vec_dot_avx2::f32_f32, GgmlType::F32},
    {GgmlType::F16, 1, 2, f16_to_float, f16_from_float, vec_dot_scalar::f16_f16,
     vec_dot_avx2::f16_f16, GgmlType::F16},
    {GgmlType::BF16, 1, 2, bf16_to_float, bf16_from_float, vec_dot_scalar::bf16_bf16,
     vec_dot_avx2::bf16_bf16, GgmlType::BF16},
    {GgmlType::Q4_0, kQK4_0, sizeof(BlockQ4_0), to_float<BlockQ4_0, dequantize_row_q4_0>,
     from_float<BlockQ4_0, quantize_row_q4_0>, vec_dot_scalar::q4_0_q8_0, vec_dot_avx2::q4_0_q8_0,
     GgmlType::Q8_0},
    {GgmlType::Q4_1, kQK4_1, sizeof(BlockQ4_1), to_float<BlockQ4_1, dequantize_row_q4_1>,
     from_float<BlockQ4_1, quantize_row_q4_1>, vec_dot_scalar::q4_1_q8_1, vec_dot_avx2::q4_1_q8_1,
     GgmlType::Q8_1},
    {GgmlType::Q5_0, kQK5_0, sizeof(BlockQ5_0), to_float<BlockQ5_0, dequantize_row_q5_0>,
     from_float<BlockQ5_0, quantize_row_q5_0>, vec_dot_scalar::q5_0_q8_0, vec_dot_avx2::q5_0_q8_0,
     GgmlType::Q8_0},
    {GgmlType::Q5_1, kQK5_1, sizeof(BlockQ5_1), to_float<BlockQ5_1, dequantize_row_q5_1>,
     from_float<BlockQ5_1, quantize_row_q5_1>, vec_dot_scalar::q5_1_q8_1, vec_dot_avx2::q5_1_q8_1,
     GgmlType::Q8_1},
    {GgmlType::Q8_0, kQK8_0, sizeof(BlockQ8_0), to_float<BlockQ8_0, dequantize_row_q8_0>,
     from_float<BlockQ8_0, quantize_row_q8_0>, vec_dot_scalar::q8_0_q8_0, vec_dot_avx2::q8_0_q8_0,
     GgmlType::Q8_0, from_float<BlockQ8_0, quantize_avx2::q8_0>},
    {GgmlType::Q8_1, kQK8_1, sizeof(BlockQ8_1), to_float<BlockQ8_1, dequantize_row_q8_1>,
     from_float<BlockQ8_1, quantize_row_q8_1>, nullptr, nullptr, GgmlType::Q8_1,
     from_float<BlockQ8_1, quantize_avx2::q8_1>},
    {GgmlType::Q2_K, kQK_K, sizeof(BlockQ2_K), to_float<BlockQ2_K, dequantize_row_q2_k>,
     from_float<BlockQ2_K, quantize_row_q2_k>, vec_dot_scalar::q2_k_q8_k, vec_dot_avx2::q2_k_q8_k,
     GgmlType::Q8_K},
    {GgmlType::Q3_K, kQK_K, sizeof(BlockQ3_K), to_float<BlockQ3_K, dequantize_row_q3_k>,
     from_float<BlockQ3_K, quantize_row_q3_k>, vec_dot_scalar::q3_k_q8_k, vec_dot_avx2::q3_k_q8_k,
     GgmlType::Q8_K},
    {GgmlType::Q4_K, kQK_K, sizeof(BlockQ4_K), to_float<BlockQ4_K, dequantize_row_q4_k>,
     from_float<BlockQ4_K, quantize_row_q4_k>, vec_dot_scalar::q4_k_q8_k, vec_dot_avx2::q4_k_q8_k,
     GgmlType::Q8_K},
    {GgmlType::Q5_K, kQK_K, sizeof(BlockQ5_K), to_float<BlockQ5_K, dequantize_row_q5_k>,
     from_float<BlockQ5_K, quantize_row_q5_k>, vec_dot_scalar::q5_k_q8_k, vec_dot_avx2::q5_k_q8_k,
     GgmlType::Q8_K},
    {GgmlType::Q6_K, kQK_K, sizeof(BlockQ6_K), to_float<BlockQ6_K, dequantize_row_q6_k>,
     from_float<BlockQ6_K, quantize_row_q6_k>, vec_dot_scalar::q6_k_q8_k, vec_dot_avx2::q6_k_q8_k,
     GgmlType::Q8_K},
    {GgmlType::Q8_K, kQK_K, sizeof(BlockQ8_K), to_float<BlockQ8_K, dequantize_row_q8_k>,
     from_float<BlockQ8_K, quantize_row_q8_k>, nullptr, nullptr, GgmlType::Q8_K},
};

constexpr size_t kCount = sizeof(kEntries) / sizeof(kEntries[0]);

struct Table {
  QuantOps ops[kCount];
  Table() {
    const bool simd = quant_avx2_enabled();
    for (size_t i = 0; i < kCount; ++i) {
      const Entry& e = kEntries[i];
      const bool use_simd = simd && e.simd != nullptr;
      const FromFloatFn from =
          simd && e.from_float_simd != nullptr ? e.from_float_simd : e.from_float;
      ops[i] = QuantOps{
          e.type,   e.block_elements, e.block_bytes, e.to_float, from, use_simd ? e.simd : e.scalar,
          e.scalar, e.vec_dot_type,   use_simd};
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const QuantOps* find_quant_ops(GgmlType type) {
  for (const QuantOps& ops : table().ops) {
    if (ops.type == type) return &ops;
  }
  return nullptr;
}

const QuantOps& quant_ops(GgmlType type) {
  if (const QuantOps* ops = find_quant_ops(type)) return *ops;
  const auto traits = ggml_type_traits(static_cast<uint32_t>(type));
  const std::string name =
      traits ? std::string(traits->name) : "id " + std::to_string(static_cast<uint32_t>(type));
  throw FormatError("tensor type " + name + " is not supported by the CPU quantization code", "", 0,
                    "supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K..q6_K");
}

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
  quant_ops(type).to_float(src, dst, n);
}

void quantize_row(GgmlType type, const float* src, void* dst, int64_t n) {
  quant_ops(type).from_float(src, dst, n);
}

}  // namespace nvhcq::llm
