// The small kernels around a decode step (kernels/llm_step.cu) on the CPU warp
// emulator: swiglu_f32 against float64, the bookkeeping of a chained step
// (kernels/llm_chain.cuh): every block counts itself finished, and the step's
// last launch moves the base on by the step's blocks, across the counter's wrap;
// and prefill's RMSNorm that first adds the split-K partial products.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/half.h"
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

// add_splits_rmsnorm_rows against the two passes it replaces: the residual rows
// take the splits' products summed in split order (what add_partials adds), then
// rmsnorm_rows normalizes them; both results must be bit-identical, and the
// normalized rows match float64 to f16 rounding. 320 columns leave some
// threads one element and others two; 8,256 are more than a thread holds
// (NORM_HELD), so the rows loop.
TEST(LlmStepEmulation, SplitSumsFoldedIntoTheNormMatchTheTwoPasses) {
  SKIP_WITHOUT_FIBERS();
  for (const int cols : {320, LLM_NORM_THREADS * NORM_HELD + 64}) {
    SCOPED_TRACE(cols);
    const int tokens = 3, splits = 3;
    const float eps = 1e-5f;
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(tokens) * cols), w(cols);
    std::vector<float> partial(static_cast<size_t>(splits) * tokens * cols);
    for (float& v : x) v = normal(rng);
    for (float& v : w) v = 1.0f + 0.1f * normal(rng);
    for (float& v : partial) v = normal(rng);

    std::vector<float> x_ref = x;
    for (size_t i = 0; i < x_ref.size(); ++i) {
      float s = 0.0f;
      for (int z = 0; z < splits; ++z) s += partial[static_cast<size_t>(z) * x_ref.size() + i];
      x_ref[i] += s;
    }
    const uint16_t kGuard16 = 0x7bcd;
    std::vector<uint16_t> out_ref(x.size() + 8, kGuard16), out(x.size() + 8, kGuard16);
    ASSERT_EQ(launch(emu::Dim3{tokens, 1, 1}, LLM_NORM_THREADS,
                     [&] { rmsnorm_rows(x_ref.data(), w.data(), out_ref.data(), cols, eps, 0); }),
              "");
    ASSERT_EQ(launch(emu::Dim3{tokens, 1, 1}, LLM_NORM_THREADS,
                     [&] {
                       add_splits_rmsnorm_rows(x.data(), w.data(), out.data(), cols, eps, 0, partial.data(), splits,
                                               tokens);
                     }),
              "");
    EXPECT_EQ(x, x_ref) << "the residual rows took the splits' products";
    EXPECT_EQ(out, out_ref) << "normalized as the separate norm normalizes";
    for (int t = 0; t < tokens; ++t) {
      double ss = 0.0;
      for (int i = 0; i < cols; ++i) ss += double{x_ref[t * cols + i]} * x_ref[t * cols + i];
      const double scale = 1.0 / std::sqrt(ss / cols + eps);
      for (int i = 0; i < cols; ++i) {
        const double want = x_ref[t * cols + i] * scale * w[i];
        EXPECT_NEAR(cpu::half_to_float(out[t * cols + i]), want, std::fabs(want) / 1024 + 1e-6) << t << " " << i;
      }
    }
    for (size_t i = x.size(); i < out.size(); ++i) EXPECT_EQ(out[i], kGuard16) << "write past the rows";
  }
}

}  // namespace
}  // namespace nvhcq::llm
