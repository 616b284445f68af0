// Decode outputs handed over quantized (kernels/llm_handoff.cuh) on the CPU warp
// emulator: a warp's group against the CPU's Q8_1, bit for bit, and the
// consumer's copy of a hand-off into shared memory.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/emulation/emulation_skip.h"
#include "kernels/llm_emulation_reference.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/gemm_prims.cuh"
#include "kernels/llm_handoff.cuh"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

constexpr uint8_t kPoison = 0xA5;

// Values with the quantizer's special cases: an all-zero group, a group whose
// largest magnitude comes twice with opposite signs, and one of a single
// nonzero value.
std::vector<float> special_values(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = 2.5f * normal(rng);
  std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
  x[64 + 5] = 9.0f;
  x[64 + 20] = -9.0f;
  std::fill(x.begin() + 128, x.begin() + 160, 0.0f);
  x[128 + 31] = 0.75f;
  return x;
}

// Every group quantized by a warp of its own (four warps taking turns) as the
// CPU quantizes it to Q8_1, bit for bit.
TEST(LlmHandoffEmulation, GroupsAreQuantizedAsTheCpuDoes) {
  SKIP_WITHOUT_FIBERS();
  constexpr int kN = 640;
  const std::vector<float> x = special_values(kN, 3);
  std::vector<uint8_t> out(llm_act_smem_bytes(kActQ8x32, kN), kPoison);
  emu::LaunchConfig cfg;
  cfg.grid = emu::Dim3{1, 1, 1};
  cfg.block = emu::Dim3{128, 1, 1};
  ASSERT_EQ(emu::launch(cfg,
                        [&] {
                          const int lane = threadIdx.x & 31;
                          for (int g = threadIdx.x >> 5; g < kN / LLM_GROUP; g += 4) {
                            handoff_group(x[g * LLM_GROUP + lane], out.data(), kN, g);
                          }
                        }),
            "");
  expect_handoff(handoff_reference(x), q8x32_view(out.data(), kN), "q8x32");
}

// A consumer's copy: every byte of the layout (the emulator fails a store past
// the shared memory), for layouts that end on a 16-byte boundary and on a
// 4-byte one, in more passes than one.
TEST(LlmHandoffEmulation, TheCopyIsTheWholeLayout) {
  SKIP_WITHOUT_FIBERS();
  for (const int n : {96, 160, 8192}) {
    const uint32_t bytes = llm_act_smem_bytes(kActQ8x32, n);
    std::vector<uint8_t> src(bytes + 64);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
    std::vector<uint8_t> copy(bytes, kPoison);
    emu::LaunchConfig cfg;
    cfg.grid = emu::Dim3{1, 1, 1};
    cfg.block = emu::Dim3{64, 1, 1};
    cfg.shared_bytes = bytes;
    ASSERT_EQ(emu::launch(cfg,
                          [&] {
                            uint8_t* smem = dynamic_smem();
                            copy_handoff<64, ActShare<1>>(src.data(), n, smem);
                            __syncthreads();
                            if (threadIdx.x == 0) std::memcpy(copy.data(), smem, bytes);
                          }),
              "")
        << n << " values";
    EXPECT_EQ(std::memcmp(copy.data(), src.data(), bytes), 0) << n << " values";
  }
}

}  // namespace
}  // namespace nvhcq::llm
