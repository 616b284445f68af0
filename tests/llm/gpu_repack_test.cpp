// The GPU weight layouts on the host: GGUF rows repacked for the GPU must
// dequantize to the CPU's values, and the per-group integer products the kernels
// take (kernels/llm_formats.cuh, compiled here as C++) must add up to the CPU's
// vec_dot on the same quantized activations.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/llm_formats.cuh"
#include "llm/gpu/weight_repack.h"
#include "llm/quant/blocks.h"
#include "llm/quant/half.h"
#include "llm/quant/quant_registry.h"

namespace nvhcq::llm {
namespace {

constexpr int64_t kRows = 5;
constexpr int64_t kCols = 768;  // three super-blocks, 24 groups

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Rows of different magnitudes, and a few outliers, as in real weights.
    const float scale = 0.02f * static_cast<float>(1 + (i / kCols) % 3);
    v[static_cast<size_t>(i)] = normal(rng) * scale * ((i % 97) == 0 ? 8.0f : 1.0f);
  }
  return v;
}

struct Repacked {
  GpuMatrixLayout layout;
  std::vector<uint8_t> arrays[kGpuArrayCount];
  std::vector<uint8_t> gguf;
  LlmGpuMatrix desc{};
};

Repacked repack(GgmlType type, const std::vector<float>& values) {
  Repacked r;
  const QuantOps& ops = quant_ops(type);
  const uint64_t row_bytes = ops.row_bytes(kCols);
  r.gguf.resize(row_bytes * kRows);
  for (int64_t row = 0; row < kRows; ++row) {
    quantize_row(type, values.data() + row * kCols, r.gguf.data() + row * row_bytes, kCols);
  }
  r.layout = gpu_matrix_layout(type, kRows, kCols);
  RepackTarget t;
  for (int a = 0; a < kGpuArrayCount; ++a) {
    // Poison: a byte the repacker forgets to write shows up as a wrong value.
    r.arrays[a].assign(r.layout.array_bytes(static_cast<GpuArray>(a), kRows), 0xA5);
    t.array[a] = r.layout.row_bytes[a] ? r.arrays[a].data() : nullptr;
  }
  repack_rows(type, r.layout, r.gguf.data(), kRows, t);
  uint64_t* addr[kGpuArrayCount] = {&r.desc.qs, &r.desc.qh, &r.desc.scales, &r.desc.super};
  for (int a = 0; a < kGpuArrayCount; ++a) *addr[a] = reinterpret_cast<uint64_t>(r.arrays[a].data());
  r.desc.format = r.layout.format;
  r.desc.rows = static_cast<int32_t>(kRows);
  r.desc.cols = static_cast<int32_t>(kCols);
  return r;
}

class GpuRepack : public ::testing::TestWithParam<GgmlType> {};

TEST_P(GpuRepack, DequantizesToTheCpuValues) {
  const GgmlType type = GetParam();
  const auto values = random_values(kRows * kCols, 11);
  Repacked r = repack(type, values);
  const QuantOps& ops = quant_ops(type);
  std::vector<float> cpu(kCols);
  for (int64_t row = 0; row < kRows; ++row) {
    ops.to_float(r.gguf.data() + row * ops.row_bytes(kCols), cpu.data(), kCols);
    float max_abs = 0.0f;
    for (float v : cpu) max_abs = std::max(max_abs, std::fabs(v));
    ASSERT_GT(max_abs, 0.0f);
    for (int g = 0; g < kCols / LLM_GROUP; ++g) {
      float out[LLM_GROUP];
      llm_dequant_group(r.desc, row, g, out);
      for (int j = 0; j < LLM_GROUP; ++j) {
        const float want = cpu[static_cast<size_t>(g * LLM_GROUP + j)];
        // Equal up to the rounding of one fused multiply-add.
        ASSERT_NEAR(out[j], want, 1e-6f * max_abs) << "row " << row << " group " << g << " value " << j;
      }
    }
  }
}

// Activations of one group in the kernels' representation, from the CPU's blocks.
struct GroupActivations {
  LlmActGroup words;
  LlmQ8x32 q8;
  LlmQ8K q8k;
};

GroupActivations group_from_cpu(GgmlType act_type, const uint8_t* act, int g) {
  GroupActivations ga{};
  const int8_t* qs = nullptr;
  if (act_type == GgmlType::Q8_0) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(act) + g;
    qs = b->qs;
    ga.q8.d = fp16_to_fp32(b->d);
  } else if (act_type == GgmlType::Q8_1) {
    const auto* b = reinterpret_cast<const BlockQ8_1*>(act) + g;
    qs = b->qs;
    ga.q8.d = fp16_to_fp32(b->d);
    ga.q8.s = fp16_to_fp32(b->s);
  } else {
    const auto* b = reinterpret_cast<const BlockQ8_K*>(act) + g / LLM_GROUPS_PER_SUPER;
    const int in_super = g % LLM_GROUPS_PER_SUPER;
    qs = b->qs + 32 * in_super;
    ga.q8k.d = b->d;
    ga.q8k.bsum_lo = b->bsums[2 * in_super];
    ga.q8k.bsum_hi = b->bsums[2 * in_super + 1];
  }
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += qs[j];
  ga.q8.sum = sum;
  std::memcpy(ga.words.x, qs, 32);
  return ga;
}

float gpu_group_dot(const Repacked& r, int64_t row, int g, const GroupActivations& a) {
  const int64_t rg = row * (kCols / LLM_GROUP) + g;
  const auto* qs = reinterpret_cast<const uint32_t*>(r.desc.qs) + rg * (r.desc.format == kGpuQ8_0 ? 8 : 4);
  const auto* qh32 = reinterpret_cast<const uint32_t*>(r.desc.qh);
  const auto* sc16 = reinterpret_cast<const uint16_t*>(r.desc.scales);
  const auto* sc32 = reinterpret_cast<const uint32_t*>(r.desc.scales);
  const int64_t sup = rg / LLM_GROUPS_PER_SUPER;
  switch (r.desc.format) {
    case kGpuQ4_0: return llm_group_q4_0(qs, sc16[rg], a.words, a.q8);
    case kGpuQ4_1: return llm_group_q4_1(qs, sc32[rg], a.words, a.q8);
    case kGpuQ5_0: return llm_group_q5_0(qs, qh32[rg], sc16[rg], a.words, a.q8);
    case kGpuQ5_1: return llm_group_q5_1(qs, qh32[rg], sc32[rg], a.words, a.q8);
    case kGpuQ8_0: return llm_group_q8_0(qs, sc16[rg], a.words, a.q8);
    case kGpuQ4_K:
      return llm_group_q4_k(qs, sc16[rg], reinterpret_cast<const uint32_t*>(r.desc.super)[sup], a.words, a.q8k);
    case kGpuQ5_K:
      return llm_group_q5_k(qs, qh32[rg], sc16[rg], reinterpret_cast<const uint32_t*>(r.desc.super)[sup], a.words,
                            a.q8k);
    case kGpuQ6_K:
      return llm_group_q6_k(qs, qh32[2 * rg], qh32[2 * rg + 1], sc16[rg],
                            reinterpret_cast<const uint16_t*>(r.desc.super)[sup], a.words, a.q8k);
    default: throw Error("no group product for this format");
  }
}

TEST_P(GpuRepack, GroupProductsAddUpToTheCpuDot) {
  const GgmlType type = GetParam();
  if (type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::F32) {
    GTEST_SKIP() << "plain formats take float products in the kernel itself";
  }
  const auto values = random_values(kRows * kCols, 23);
  Repacked r = repack(type, values);
  const QuantOps& ops = quant_ops(type);
  const GgmlType act_type = ops.vec_dot_type;
  const QuantOps& act_ops = quant_ops(act_type);
  const auto x = random_values(kCols, 5);
  std::vector<uint8_t> act(act_ops.row_bytes(kCols));
  act_ops.from_float(x.data(), act.data(), kCols);
  for (int64_t row = 0; row < kRows; ++row) {
    const float cpu = ops.vec_dot_scalar(r.gguf.data() + row * ops.row_bytes(kCols), act.data(), kCols);
    double gpu = 0.0, magnitude = 0.0;
    for (int g = 0; g < kCols / LLM_GROUP; ++g) {
      const float part = gpu_group_dot(r, row, g, group_from_cpu(act_type, act.data(), g));
      gpu += part;
      magnitude += std::fabs(part);
    }
    ASSERT_GT(magnitude, 0.0);
    EXPECT_NEAR(gpu, cpu, 1e-5 * magnitude) << "row " << row;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, GpuRepack,
                         ::testing::Values(GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                                           GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                                           GgmlType::F16, GgmlType::BF16, GgmlType::F32),
                         [](const auto& info) { return std::string(traits(info.param).name); });

TEST(GpuRepackLayout, RefusesFormatsWithoutKernelsAndPartialBlocks) {
  EXPECT_THROW(gpu_matrix_layout(GgmlType::Q2_K, 4, 256), FormatError);
  EXPECT_THROW(gpu_matrix_layout(GgmlType::Q4_K, 4, 288), FormatError);
  EXPECT_THROW(gpu_matrix_layout(GgmlType::F16, 4, 100), FormatError);
  const GpuMatrixLayout l = gpu_matrix_layout(GgmlType::Q6_K, 3, 512);
  // 210 bytes per 256 in GGUF; the same 210 on the GPU (128 + 64 + 16 + 2).
  EXPECT_EQ(l.total_bytes(), 3u * 2 * 210);
}

}  // namespace
}  // namespace nvhcq::llm
