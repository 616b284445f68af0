// The small kernels around a decode step (kernels/llm_step.cu) on the CPU warp
// emulator: swiglu_f32 against float64, and the bookkeeping of a chained step
// (kernels/llm_chain.cuh): every block counts itself finished, and the step's
// last launch moves the base on by the step's blocks, across the counter's wrap.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/emulation/emulation_skip.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/llm_step.cu"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

std::string launch(emu::Dim3 grid, uint32_t threads, const std::function<void()>& body) {
  emu::LaunchConfig cfg;
  cfg.block = emu::Dim3{threads, 1, 1};
  cfg.grid = grid;
  return emu::launch(cfg, body);
}

constexpr float kGuard = -1234.5f;

TEST(LlmStepEmulation, SwigluMatchesFloat64AndEveryBlockCountsItself) {
  SKIP_WITHOUT_FIBERS();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int n = 1000;
  std::vector<float> gate(n), up(n);
  for (int i = 0; i < n; ++i) {
    gate[i] = normal(rng);
    up[i] = normal(rng);
  }
  for (const bool chained : {false, true}) {
    std::vector<float> out(n + 2, std::nanf(""));
    out.front() = out.back() = kGuard;
    LlmStepState state{};
    state.chain_base = 100;
    state.chain_done = 107;  // the launches before have finished
    const LlmChainLink link{chained ? 1 : 0, chained ? 7 : 0};
    ASSERT_EQ(launch(emu::Dim3{3, 1, 1}, 128, [&] { swiglu_f32(gate.data(), up.data(), out.data() + 1, n, link, &state); }),
              "");
    for (int i = 0; i < n; ++i) {
      const double g = gate[i], want = g / (1.0 + std::exp(-g)) * up[i];
      ASSERT_LE(std::fabs(out[i + 1] - want), 1e-5 * (std::fabs(want) + 1e-3)) << i;
    }
    EXPECT_EQ(out.front(), kGuard);
    EXPECT_EQ(out.back(), kGuard);
    EXPECT_EQ(state.chain_done, chained ? 110u : 107u) << "one count per block, and only when chained";
    EXPECT_EQ(state.chain_base, 100u) << "only the step's last launch moves the base";
  }
}

TEST(LlmStepEmulation, TheLastLaunchMovesTheBaseOnByTheStepsBlocks) {
  SKIP_WITHOUT_FIBERS();
  for (const uint32_t base : {0u, 5000u, 0xfffffff0u}) {  // the last one wraps within the step
    LlmStepState state{};
    state.pos = 5;
    state.argmax = (uint64_t{0x3f800000} << 32) | (0xffffffffu - 42u);  // index 42 won
    state.chain_base = base;
    state.chain_done = base + 20;  // the step's 20 other blocks
    std::vector<int32_t> history(8, -1);
    ASSERT_EQ(launch(emu::Dim3{}, 1, [&] { finish_step(&state, history.data(), 1, LlmChainLink{1, 20}); }), "");
    EXPECT_EQ(state.token, 42);
    EXPECT_EQ(state.pos, 6);
    EXPECT_EQ(history[5], 42);
    EXPECT_EQ(state.argmax, 0u);
    EXPECT_EQ(state.chain_base, base + 21) << "the next step counts from here";
    EXPECT_EQ(state.chain_done, base + 21);
  }
  // Not chained (prefill): the counts stay.
  LlmStepState state{};
  state.chain_base = 3;
  state.chain_done = 9;
  std::vector<int32_t> history(8, -1);
  ASSERT_EQ(launch(emu::Dim3{}, 1, [&] { finish_step(&state, history.data(), 2, LlmChainLink{}); }), "");
  EXPECT_EQ(state.pos, 2);
  EXPECT_EQ(state.chain_base, 3u);
  EXPECT_EQ(state.chain_done, 9u);
}

}  // namespace
}  // namespace nvhcq::llm
