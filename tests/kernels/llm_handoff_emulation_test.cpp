// Decode outputs handed over quantized (kernels/llm_handoff.cuh) on the CPU warp
// emulator: a warp's group against the CPU's Q8_1, bit for bit, and the
// consumer's copy of a hand-off into shared memory.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
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

// Q8_K super-blocks spread over parts (kernels/llm_handoff.cuh, as the
// attention's blocks hold them: 64 or 128 values each), each part's warps'
// peaks combined in index order and each warp quantizing its 32 values, as the
// CPU quantizes the whole super-block, bit for bit. The special cases: an
// all-zero super-block, equal magnitudes of opposite sign in different parts,
// in different warps of one part and in one warp (the first must win), and a
// super-block whose largest magnitude is negative.
TEST(LlmHandoffEmulation, SuperBlocksSpreadOverPartsAreQuantizedAsTheCpuDoes) {
  SKIP_WITHOUT_FIBERS();
  constexpr int kN = 1536, kWarps = 8;
  std::vector<float> x = special_values(kN, 5);
  std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
  for (const auto& [first, second] :
       {std::pair<int, int>{512 + 5, 512 + 200}, std::pair<int, int>{768 + 3, 768 + 40},
        std::pair<int, int>{1024 + 17, 1024 + 19}}) {
    x[first] = -40.0f;
    x[second] = 40.0f;
  }
  x[1280 + 100] = -50.0f;
  for (const int part : {64, 128}) {
    std::vector<uint8_t> out(llm_act_smem_bytes(kActQ8K, kN), kPoison);
    std::vector<uint2> peaks(kWarps);
    emu::LaunchConfig cfg;
    cfg.grid = emu::Dim3{1, 1, 1};
    cfg.block = emu::Dim3{32 * kWarps, 1, 1};
    ASSERT_EQ(emu::launch(cfg,
                          [&] {
                            const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
                            for (int sb = 0; sb < kN / LLM_SUPER; ++sb) {
                              const int i0 = sb * LLM_SUPER + 32 * warp;
                              const Peak p = warp_peak(x[i0 + lane]);
                              if (lane == 0) peaks[warp] = peak_bits(p);
                              __syncthreads();
                              // Each part's peak from its warps, then the parts'.
                              const int warps_per_part = part / 32;
                              Peak all{0u, 0.0f};
                              for (int first = 0; first < kWarps; first += warps_per_part) {
                                Peak mine = peak_of(peaks[first]);
                                for (int w = 1; w < warps_per_part; ++w) mine = first_peak(mine, peak_of(peaks[first + w]));
                                all = first == 0 ? mine : first_peak(all, mine);
                              }
                              handoff_q8k_warp(x[i0 + lane], all, out.data(), kN, i0);
                              __syncthreads();
                            }
                          }),
              "")
        << part;
    std::vector<BlockQ8_K> want(kN / LLM_SUPER);
    quantize_row_q8_k(x.data(), want.data(), kN);
    const ActView v = q8k_view(out.data(), kN);
    for (int sb = 0; sb < kN / LLM_SUPER; ++sb) {
      for (int i = 0; i < LLM_SUPER; ++i) ASSERT_EQ(v.q[sb * LLM_SUPER + i], want[sb].qs[i]) << sb << "/" << i;
      EXPECT_EQ(v.d[sb], want[sb].d) << "super-block " << sb;
      for (int j = 0; j < LLM_SUPER / 16; ++j) EXPECT_EQ(v.sum[sb * 16 + j], want[sb].bsums[j]) << sb << "/" << j;
    }
  }
}

// A consumer's copy: every byte of the layout (the emulator fails a store past
// the shared memory), Q8_0/Q8_1 groups and Q8_K super-blocks, for layouts that
// end on a 16-byte boundary and on a 4-byte one, in more passes than one.
template <int kAct>
void expect_whole_copies(std::initializer_list<int> sizes) {
  for (const int n : sizes) {
    const uint32_t bytes = llm_act_smem_bytes(kAct, n);
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
                            copy_handoff<64, ActShare<1>, kAct>(src.data(), n, smem);
                            __syncthreads();
                            if (threadIdx.x == 0) std::memcpy(copy.data(), smem, bytes);
                          }),
              "")
        << kAct << ": " << n << " values";
    EXPECT_EQ(std::memcmp(copy.data(), src.data(), bytes), 0) << kAct << ": " << n << " values";
  }
}

TEST(LlmHandoffEmulation, TheCopyIsTheWholeLayout) {
  SKIP_WITHOUT_FIBERS();
  expect_whole_copies<kActQ8x32>({96, 160, 8192});
  expect_whole_copies<kActQ8K>({256, 768, 8192});
}

}  // namespace
}  // namespace nvhcq::llm
