// Prefill attention on the tensor cores (kernels/llm_flash_attention.cu) on the
// CPU warp emulator, against float64 causal attention over the same f16 KV
// cache: both head sizes, both RoPE styles, grouped queries, a batch that starts
// mid-context and does not fill its last tile, and guard values around the
// output rows.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cpu/half.h"
#include "kernels/emulation/emulation_skip.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/llm_flash_attention.cu"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

struct Case {
  int head_dim;
  bool neox;
  int n_rot;
};

class FlashPrefillEmulation : public ::testing::TestWithParam<Case> {};

TEST_P(FlashPrefillEmulation, MatchesFloat64CausalAttention) {
  SKIP_WITHOUT_FIBERS();
  const Case c = GetParam();
  const int hd = c.head_dim, n_head = 4, n_kv = 2, n_gqa = n_head / n_kv;
  const int pos0 = 37, n = 70, capacity = 128;  // keys 0..106; the batch's second tile holds 6 tokens
  const int qkv_stride = (n_head + 2 * n_kv) * hd, out_stride = n_head * hd + 8;
  std::mt19937 rng(c.head_dim * 7 + c.neox);
  std::normal_distribution<float> normal(0.0f, 1.0f);

  // The cache (already rotated keys) for every position the batch sees.
  std::vector<uint16_t> k_cache(static_cast<size_t>(n_kv) * capacity * hd), v_cache(k_cache.size());
  for (auto& v : k_cache) v = cpu::float_to_half(normal(rng));
  for (auto& v : v_cache) v = cpu::float_to_half(normal(rng));
  std::vector<float> qkv(static_cast<size_t>(n) * qkv_stride);
  for (auto& v : qkv) v = normal(rng);
  // RoPE table: cos/sin of pos * theta_i.
  std::vector<float> rope(static_cast<size_t>(capacity) * c.n_rot);
  for (int p = 0; p < capacity; ++p) {
    for (int i = 0; i < c.n_rot / 2; ++i) {
      const double theta = p * std::pow(10000.0, -2.0 * i / c.n_rot);
      rope[static_cast<size_t>(p) * c.n_rot + 2 * i] = static_cast<float>(std::cos(theta));
      rope[static_cast<size_t>(p) * c.n_rot + 2 * i + 1] = static_cast<float>(std::sin(theta));
    }
  }
  LlmStepState state{};
  state.pos = pos0;
  const uint16_t kGuard = 0x7bcd;
  std::vector<uint16_t> out(static_cast<size_t>(n) * out_stride, kGuard);

  emu::clear_globals();
  emu::register_global(k_cache.data(), k_cache.size() * 2);
  emu::register_global(v_cache.data(), v_cache.size() * 2);
  LlmAttentionJob job{};
  job.qkv = reinterpret_cast<uint64_t>(qkv.data());
  job.k_cache = reinterpret_cast<uint64_t>(k_cache.data());
  job.v_cache = reinterpret_cast<uint64_t>(v_cache.data());
  job.out = reinterpret_cast<uint64_t>(out.data());
  job.rope = reinterpret_cast<uint64_t>(rope.data());
  job.state = reinterpret_cast<uint64_t>(&state);
  job.n_head = n_head;
  job.n_kv = n_kv;
  job.head_dim = hd;
  job.n_rot = c.n_rot;
  job.capacity = capacity;
  job.neox = c.neox ? 1 : 0;
  job.qkv_stride = qkv_stride;
  job.out_stride = out_stride;
  job.out_f16 = 1;
  job.n_tokens = n;
  job.scale = 1.0f / std::sqrt(static_cast<float>(hd));

  emu::LaunchConfig cfg;
  cfg.block = emu::Dim3{FA_THREADS, 1, 1};
  cfg.grid = emu::Dim3{static_cast<uint32_t>((n + FA_BQ - 1) / FA_BQ), static_cast<uint32_t>(n_head), 1};
  cfg.shared_bytes = 2 * FA_BK * hd * 2;
  const std::string error = emu::launch(cfg, [&] {
    if (hd == 64) {
      flash_prefill_hd64(job);
    } else {
      flash_prefill_hd128(job);
    }
  });
  ASSERT_EQ(error, "");

  double worst = 0.0;
  for (int t = 0; t < n; ++t) {
    const int qpos = pos0 + t;
    for (int h = 0; h < n_head; ++h) {
      const int kvh = h / n_gqa;
      // The query, rotated in double.
      std::vector<double> q(static_cast<size_t>(hd));
      const float* src = qkv.data() + static_cast<size_t>(t) * qkv_stride + static_cast<size_t>(h) * hd;
      for (int d = 0; d < hd; ++d) q[static_cast<size_t>(d)] = src[d];
      for (int i = 0; i < c.n_rot / 2; ++i) {
        const int a = c.neox ? i : 2 * i, b = c.neox ? i + c.n_rot / 2 : 2 * i + 1;
        const double cs = rope[static_cast<size_t>(qpos) * c.n_rot + 2 * i];
        const double sn = rope[static_cast<size_t>(qpos) * c.n_rot + 2 * i + 1];
        q[static_cast<size_t>(a)] = src[a] * cs - src[b] * sn;
        q[static_cast<size_t>(b)] = src[a] * sn + src[b] * cs;
      }
      std::vector<double> w(static_cast<size_t>(qpos) + 1);
      double mx = -1e300;
      for (int k = 0; k <= qpos; ++k) {
        double s = 0.0;
        for (int d = 0; d < hd; ++d) {
          s += q[static_cast<size_t>(d)] *
               cpu::half_to_float(k_cache[(static_cast<size_t>(kvh) * capacity + k) * hd + d]);
        }
        w[static_cast<size_t>(k)] = s / std::sqrt(static_cast<double>(hd));
        mx = std::max(mx, w[static_cast<size_t>(k)]);
      }
      double sum = 0.0;
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int d = 0; d < hd; ++d) {
        double want = 0.0;
        for (int k = 0; k <= qpos; ++k) {
          want += w[static_cast<size_t>(k)] / sum *
                  cpu::half_to_float(v_cache[(static_cast<size_t>(kvh) * capacity + k) * hd + d]);
        }
        const double got =
            cpu::half_to_float(out[static_cast<size_t>(t) * out_stride + static_cast<size_t>(h) * hd + d]);
        // f16 queries, probabilities and output: a few units of 2^-11 of the values involved.
        ASSERT_NEAR(got, want, 6e-3 * (1.0 + std::fabs(want))) << "token " << t << " head " << h << " dim " << d;
        worst = std::max(worst, std::fabs(got - want));
      }
    }
    for (int g = n_head * hd; g < out_stride; ++g) {
      ASSERT_EQ(out[static_cast<size_t>(t) * out_stride + g], kGuard) << "write past the heads, token " << t;
    }
  }
  RecordProperty("worst_abs_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Heads, FlashPrefillEmulation,
                         ::testing::Values(Case{64, false, 64}, Case{128, false, 128}, Case{64, true, 64},
                                           Case{128, true, 96}),
                         [](const auto& info) {
                           return "hd" + std::to_string(info.param.head_dim) + (info.param.neox ? "_neox" : "_normal") +
                                  "_rot" + std::to_string(info.param.n_rot);
                         });

}  // namespace
}  // namespace nvhcq::llm
