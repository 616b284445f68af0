// Decode and prefill attention over the f16 KV cache (kernels/llm_attention.cu:
// attention, attention_head, rope_kv_store) on the CPU warp emulator, against
// float64 attention over the cache the kernels must leave behind: head sizes
// 64, 128 and 256, two and four query heads per KV head in units of one, two
// or all of them, both RoPE styles and partial rotation, one split and several
// merged ones. The cache must change only at the new positions, bit for bit as
// the kernels round, and only through the unit that owns the append.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cpu/half.h"
#include "kernels/emulation/emulation_skip.h"
#include "kernels/llm_emulation_reference.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // values loaded ahead, used only where loaded
#endif
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/llm_attention.cu"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

constexpr uint16_t kUnwritten = 0x7e5a;  // an f16 NaN: cache rows past the token, never to be read
constexpr float kGuard = -1234.5f;       // around the f32 output
constexpr uint16_t kGuard16 = 0x7bcd;    // around the f16 / bf16 output
constexpr int kLead = 8;                 // guard elements before the output
// and after it: a unit's worth, so that a unit written one too far is reported
// rather than corrupting the heap.
constexpr int kTail = LLM_ATTN_MAX_OUT;

// One layer's attention inputs, and the KV cache the kernels must leave.
struct Layer {
  int hd, n_head, n_kv, n_rot, capacity;
  bool neox;
  std::vector<float> rope;                  // (cos, sin) [capacity][n_rot / 2]
  std::vector<float> qkv;                   // per token: q, k, v
  std::vector<uint16_t> k_cache, v_cache;   // handed to the kernels
  std::vector<uint16_t> k_want, v_want;     // what they must hold afterwards
  LlmStepState state{};

  Layer(int hd_, int n_head_, int n_kv_, int n_rot_, bool neox_, int capacity_, int filled, int tokens,
        std::mt19937& rng)
      : hd(hd_), n_head(n_head_), n_kv(n_kv_), n_rot(n_rot_), capacity(capacity_), neox(neox_) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    rope.resize(static_cast<size_t>(capacity) * n_rot);
    for (int p = 0; p < capacity; ++p) {
      for (int i = 0; i < n_rot / 2; ++i) {
        const double theta = p * std::pow(10000.0, -2.0 * i / n_rot);
        rope[static_cast<size_t>(p) * n_rot + 2 * i] = static_cast<float>(std::cos(theta));
        rope[static_cast<size_t>(p) * n_rot + 2 * i + 1] = static_cast<float>(std::sin(theta));
      }
    }
    // Queries twice the keys' scale, so that the softmax has clear favourites.
    qkv.resize(static_cast<size_t>(tokens) * qkv_stride());
    for (int t = 0; t < tokens; ++t) {
      for (int i = 0; i < qkv_stride(); ++i) {
        qkv[static_cast<size_t>(t) * qkv_stride() + i] = (i < n_head * hd ? 2.0f : 1.0f) * normal(rng);
      }
    }
    // Positions before `filled` hold random keys and values, the rest poison.
    k_cache.assign(static_cast<size_t>(n_kv) * capacity * hd, kUnwritten);
    v_cache = k_cache;
    for (int h = 0; h < n_kv; ++h) {
      for (size_t i = 0; i < static_cast<size_t>(filled) * hd; ++i) {
        k_cache[row(h, 0) + i] = cpu::float_to_half(normal(rng));
        v_cache[row(h, 0) + i] = cpu::float_to_half(normal(rng));
      }
    }
    k_want = k_cache;
    v_want = v_cache;
  }

  int qkv_stride() const { return (n_head + 2 * n_kv) * hd; }
  size_t row(int kvh, int pos) const { return (static_cast<size_t>(kvh) * capacity + pos) * hd; }
  const float* cs(int pos, int i) const { return &rope[static_cast<size_t>(pos) * n_rot + 2 * i]; }
  // Dimensions (a, b) of rotation pair i < n_rot / 2.
  int dim_a(int i) const { return neox ? i : 2 * i; }
  int dim_b(int i) const { return neox ? i + n_rot / 2 : 2 * i + 1; }

  // Token t, at position pos, appends its rotated key and its value: in f16,
  // the key rotated in float with each product and sum rounded once, as the
  // kernels' __fmul_rn / __fadd_rn do. The product of two floats is exact in
  // double and a double sum of two floats rounds to float as a float sum
  // would; the volatile keeps the compiler from fusing them into an FMA.
  void expect_appended(int t, int pos) {
    const auto f = [](double x) {
      volatile float r = static_cast<float>(x);
      return static_cast<double>(r);
    };
    const float* tok = qkv.data() + static_cast<size_t>(t) * qkv_stride();
    for (int h = 0; h < n_kv; ++h) {
      const float* k = tok + static_cast<size_t>(n_head + h) * hd;
      const float* v = tok + static_cast<size_t>(n_head + n_kv + h) * hd;
      std::vector<float> rk(k, k + hd);
      for (int i = 0; i < n_rot / 2; ++i) {
        const double a = k[dim_a(i)], b = k[dim_b(i)], c = cs(pos, i)[0], s = cs(pos, i)[1];
        rk[dim_a(i)] = static_cast<float>(f(f(a * c) - f(b * s)));
        rk[dim_b(i)] = static_cast<float>(f(f(a * s) + f(b * c)));
      }
      for (int d = 0; d < hd; ++d) {
        k_want[row(h, pos) + d] = cpu::float_to_half(rk[d]);
        v_want[row(h, pos) + d] = cpu::float_to_half(v[d]);
      }
    }
  }

  // Float64 attention of token t's query head h, at position pos, over
  // positions 0..pos of the cache the kernels must leave.
  std::vector<double> attend(int t, int h, int pos, double scale) const {
    const float* src = qkv.data() + static_cast<size_t>(t) * qkv_stride() + static_cast<size_t>(h) * hd;
    std::vector<double> q(src, src + hd);
    for (int i = 0; i < n_rot / 2; ++i) {
      const double a = src[dim_a(i)], b = src[dim_b(i)], c = cs(pos, i)[0], s = cs(pos, i)[1];
      q[static_cast<size_t>(dim_a(i))] = a * c - b * s;
      q[static_cast<size_t>(dim_b(i))] = a * s + b * c;
    }
    const int kvh = h / (n_head / n_kv);
    std::vector<double> w(static_cast<size_t>(pos) + 1), out(static_cast<size_t>(hd), 0.0);
    double mx = -1e300, sum = 0.0;
    for (int k = 0; k <= pos; ++k) {
      double dot = 0.0;
      for (int d = 0; d < hd; ++d) dot += q[static_cast<size_t>(d)] * cpu::half_to_float(k_want[row(kvh, k) + d]);
      w[static_cast<size_t>(k)] = dot * scale;
      mx = std::max(mx, dot * scale);
    }
    for (double& x : w) sum += (x = std::exp(x - mx));
    for (int k = 0; k <= pos; ++k) {
      for (int d = 0; d < hd; ++d) {
        out[static_cast<size_t>(d)] += w[static_cast<size_t>(k)] / sum * cpu::half_to_float(v_want[row(kvh, k) + d]);
      }
    }
    return out;
  }

  LlmAttentionJob job(int heads_per_block, int splits, int append) {
    LlmAttentionJob j{};
    j.qkv = reinterpret_cast<uint64_t>(qkv.data());
    j.k_cache = reinterpret_cast<uint64_t>(k_cache.data());
    j.v_cache = reinterpret_cast<uint64_t>(v_cache.data());
    j.rope = reinterpret_cast<uint64_t>(rope.data());
    j.state = reinterpret_cast<uint64_t>(&state);
    j.n_head = n_head;
    j.n_kv = n_kv;
    j.head_dim = hd;
    j.n_rot = n_rot;
    j.capacity = capacity;
    j.neox = neox ? 1 : 0;
    j.splits = splits;
    j.append = append;
    j.qkv_stride = qkv_stride();
    j.heads_per_block = heads_per_block;
    j.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    return j;
  }

  // The cache holds exactly `k` and `v` (by default, what the kernels must leave).
  void expect_cache(const std::vector<uint16_t>* k = nullptr, const std::vector<uint16_t>* v = nullptr) const {
    k = k != nullptr ? k : &k_want;
    v = v != nullptr ? v : &v_want;
    for (size_t i = 0; i < k_cache.size(); ++i) {
      const size_t h = i / (static_cast<size_t>(capacity) * hd), pos = i / hd % capacity, d = i % hd;
      ASSERT_EQ(k_cache[i], (*k)[i]) << "key cache, KV head " << h << " position " << pos << " dim " << d;
      ASSERT_EQ(v_cache[i], (*v)[i]) << "value cache, KV head " << h << " position " << pos << " dim " << d;
    }
  }
};

// Runs `body` in every thread of a grid of attention blocks (`threads` each).
std::string launch(emu::Dim3 grid, const std::function<void()>& body, uint32_t threads = AT_THREADS) {
  emu::LaunchConfig cfg;
  cfg.block = emu::Dim3{threads, 1, 1};
  cfg.grid = grid;
  return emu::launch(cfg, body);
}

// Error of `got` relative to `want`, with a floor for outputs near zero.
double rel_error(double got, double want) { return std::fabs(got - want) / (std::fabs(want) + 0.05); }

// The body of the attention_head_handoff_q8k_<hd> kernels of 64 and 128
// dimensions, whose clusters only the GPU builds (llm_attention.cu).
template <int kDpl>
void attention_head_q8k(const LlmAttentionJob& job) {
  __shared__ __align__(16) DecodeHeadShared sh;
  attention_head_decode<kDpl, LLM_HANDOFF_Q8K, 8 / kDpl>(job, sh);
}

struct DecodeCase {
  int hd, n_gqa, heads_per_block;
  bool neox;
  int n_rot, pos, splits;
};

class DecodeAttentionEmulation : public ::testing::TestWithParam<DecodeCase> {};

// One decode step (append): grid (units, splits); position pos's key and value
// come from qkv and go to the cache through the KV head's first unit.
TEST_P(DecodeAttentionEmulation, MatchesFloat64AndAppendsOnce) {
  SKIP_WITHOUT_FIBERS();
  const DecodeCase c = GetParam();
  const int n_kv = 2, n_head = n_kv * c.n_gqa, hd = c.hd, hpb = c.heads_per_block;
  const int units = n_head / hpb, units_per_kv = c.n_gqa / hpb;
  std::mt19937 rng(static_cast<unsigned>(hd * 1000 + c.n_gqa * 100 + hpb * 10 + c.neox + c.pos));
  Layer L(hd, n_head, n_kv, c.n_rot, c.neox, c.pos + 24, c.pos, 1, rng);
  L.state.pos = c.pos;

  const int out_stride = n_head * hd + 8;
  std::vector<float> out(kLead + out_stride + kTail, kGuard);
  // Merge scratch starts as NaN, so that reading a part nobody wrote shows.
  std::vector<float> partial(static_cast<size_t>(units) * c.splits * hpb * (hd + 2), std::nanf(""));
  // (A counter per unit, then one per Q8_K super-block handed over.)
  std::vector<uint32_t> counters(static_cast<size_t>(2 * units), 0);
  LlmAttentionJob job = L.job(hpb, c.splits, 1);
  job.out = reinterpret_cast<uint64_t>(out.data() + kLead);
  job.out_stride = out_stride;
  job.out_f16 = 0;
  job.partial = reinterpret_cast<uint64_t>(partial.data());
  job.counters = reinterpret_cast<uint64_t>(counters.data());
  job.n_tokens = 1;
  const emu::Dim3 grid{static_cast<uint32_t>(units), static_cast<uint32_t>(c.splits), 1};
  const uint32_t threads = hpb == 1 ? LLM_ATTN_DECODE_THREADS : AT_THREADS;
  const auto kernel = [&] {
    if (hpb == 1) {
      attention_head(job);
    } else {
      attention(job);
    }
  };

  // f32 output: only the kernel's f32 sums differ from float64 (2e-5 at worst
  // seen), well inside 1e-4.
  double worst = 0.0;
  const auto expect_out = [&](bool first_units) {
    for (int h = 0; h < n_head; ++h) {
      if (!first_units && (h / hpb) % units_per_kv == 0) continue;
      const std::vector<double> want = L.attend(0, h, c.pos, job.scale);
      for (int d = 0; d < hd; ++d) {
        const double got = out[kLead + static_cast<size_t>(h) * hd + d];
        ASSERT_LE(rel_error(got, want[d]), 1e-4) << "head " << h << " dim " << d << ": " << got << " vs " << want[d];
        worst = std::max(worst, rel_error(got, want[d]));
      }
    }
    for (int i = 0; i < kLead; ++i) ASSERT_EQ(out[i], kGuard) << "write before the output";
    for (size_t i = kLead + n_head * hd; i < out.size(); ++i) ASSERT_EQ(out[i], kGuard) << "write past the heads";
    for (size_t u = 0; u < counters.size(); ++u) ASSERT_EQ(counters[u], 0u) << "counter " << u << " was left set";
  };

  // The other units of a KV head take the new key and value from qkv (the
  // cache row is still poison) and must not append them: run alone, they get
  // their heads right and leave the cache as it was.
  const std::vector<uint16_t> k_before = L.k_cache, v_before = L.v_cache;
  L.expect_appended(0, c.pos);
  if (units_per_kv > 1) {
    ASSERT_EQ(launch(grid, [&] {
                if (blockIdx.x % units_per_kv != 0) kernel();
              }, threads),
              "");
    ASSERT_NO_FATAL_FAILURE(L.expect_cache(&k_before, &v_before));
    ASSERT_NO_FATAL_FAILURE(expect_out(false));
  }
  ASSERT_EQ(launch(grid, kernel, threads), "");
  ASSERT_NO_FATAL_FAILURE(L.expect_cache());
  ASSERT_NO_FATAL_FAILURE(expect_out(true));
  RecordProperty("worst_rel_error", std::to_string(worst));

  // Self-ordered (kernels/llm_chain.cuh): the launch counts every block of its
  // grid finished -- splits with no positions leave at once, split 0 of their
  // head counts them -- and computes the same.
  if (hpb == 1) {
    const std::vector<float> unchained = out;
    LlmAttentionJob chained = job;
    chained.chain = LlmChainLink{1, 0};
    L.state.chain_base = L.state.chain_done = 1000;
    ASSERT_EQ(launch(grid, [&] { attention_head(chained); }, threads), "");
    EXPECT_EQ(L.state.chain_done, 1000u + static_cast<uint32_t>(units * c.splits)) << "blocks counted finished";
    EXPECT_EQ(out, unchained);
    ASSERT_NO_FATAL_FAILURE(L.expect_cache());

    // The Q/K/V launch's values tagged (kernels/llm_tagged.cuh; the tag wraps
    // past the count's range): read without the wait, the same outputs.
    constexpr uint32_t kBase = 0xfffffffdu, kOffset = 7;
    std::vector<uint64_t> words(L.qkv.size());
    for (size_t i = 0; i < words.size(); ++i) words[i] = uint64_t{kBase + kOffset} << 32 | cpu::float_bits(L.qkv[i]);
    LlmAttentionJob tagged = chained;
    tagged.qkv = reinterpret_cast<uint64_t>(words.data());
    tagged.qkv_tag = static_cast<int32_t>(kOffset);
    // (The count says nothing has finished: the block does not wait for it.)
    L.state.chain_base = L.state.chain_done = kBase;
    std::fill(out.begin() + kLead, out.begin() + kLead + n_head * hd, std::nanf(""));
    ASSERT_EQ(launch(grid, [&] { attention_head(tagged); }, threads), "");
    EXPECT_EQ(L.state.chain_done, kBase + static_cast<uint32_t>(units * c.splits)) << "blocks counted finished";
    EXPECT_EQ(out, unchained);
    ASSERT_NO_FATAL_FAILURE(L.expect_cache());
  }

  // Units of one head hand their output over quantized for Wo
  // (attention_head_handoff, kernels/llm_handoff.cuh): the CPU's quantization
  // of the f32 outputs above, bit for bit, one or several splits.
  if (hpb != 1) return;
  const std::vector<float> plain(out.begin() + kLead, out.begin() + kLead + n_head * hd);
  std::vector<uint8_t> handed(llm_act_smem_bytes(kActQ8x32, n_head * hd), 0xA5);
  job.out = reinterpret_cast<uint64_t>(handed.data());
  job.out_stride = n_head * hd;
  job.out_handoff = LLM_HANDOFF_Q8X32;
  ASSERT_EQ(launch(grid, [&] { attention_head_handoff(job); }, threads), "");
  expect_handoff(handoff_reference(plain), q8x32_view(handed.data(), n_head * hd), "attention");

  // As Q8_K super-blocks (LLM_HANDOFF_Q8K): a super-block is 256 / hd heads,
  // whose blocks exchange their largest magnitudes in a thread-block cluster
  // on the GPU -- which the emulator, running blocks one after another, cannot
  // -- or, past one split's positions, are quantized by the last head merged.
  // So here: the merged contexts, and heads of 256 (a super-block each).
  const int active = std::min(c.splits, (c.pos + 1 + AT_MIN_CHUNK - 1) / AT_MIN_CHUNK);
  if (active == 1 && hd != LLM_SUPER) return;
  std::vector<uint8_t> q8k(llm_act_smem_bytes(kActQ8K, n_head * hd), 0xA5);
  job.out = reinterpret_cast<uint64_t>(q8k.data());
  job.out_handoff = LLM_HANDOFF_Q8K;
  const auto q8k_kernel = [&] {
    switch (hd) {
      case 64: attention_head_q8k<2>(job); break;
      case 128: attention_head_q8k<4>(job); break;
      default: attention_head_handoff_q8k_256(job); break;
    }
  };
  ASSERT_EQ(launch(grid, q8k_kernel, threads), "");
  std::vector<BlockQ8_K> want(static_cast<size_t>(n_head * hd / LLM_SUPER));
  quantize_row_q8_k(plain.data(), want.data(), n_head * hd);
  const ActView v = q8k_view(q8k.data(), n_head * hd);
  for (size_t sb = 0; sb < want.size(); ++sb) {
    for (int i = 0; i < LLM_SUPER; ++i) {
      ASSERT_EQ(v.q[sb * LLM_SUPER + i], want[sb].qs[i]) << "super-block " << sb << " value " << i;
    }
    EXPECT_EQ(v.d[sb], want[sb].d) << "super-block " << sb;
    for (int j = 0; j < LLM_SUPER / 16; ++j) EXPECT_EQ(v.sum[sb * 16 + j], want[sb].bsums[j]) << sb << "/" << j;
  }
  for (size_t u = 0; u < counters.size(); ++u) ASSERT_EQ(counters[u], 0u) << "counter " << u << " was left set";
}

INSTANTIATE_TEST_SUITE_P(
    Units, DecodeAttentionEmulation,
    ::testing::Values(
        // hd, n_gqa, heads per block, neox, n_rot, pos, splits. pos 37: one
        // split; pos 600 with 4 splits: 3 active of 201 positions, the 4th
        // exits; pos 511 with 2 splits: two full chunks of 256.
        DecodeCase{64, 2, 1, false, 64, 37, 4}, DecodeCase{64, 2, 2, true, 32, 600, 4},
        DecodeCase{64, 4, 1, true, 64, 600, 4}, DecodeCase{64, 4, 2, false, 64, 600, 4},
        DecodeCase{64, 4, 4, true, 64, 37, 4}, DecodeCase{128, 2, 1, true, 128, 600, 4},
        DecodeCase{128, 2, 2, false, 64, 37, 4}, DecodeCase{128, 4, 1, false, 128, 511, 2},
        DecodeCase{128, 4, 2, true, 96, 37, 4}, DecodeCase{128, 4, 4, true, 128, 600, 4},
        DecodeCase{256, 2, 2, false, 256, 600, 4}, DecodeCase{256, 4, 4, true, 128, 37, 4},
        // Units of one head (attention_head), whose tiles are 128 / 64 / 32
        // positions at hd 64 / 128 / 256: the new position alone, several
        // tiles in one split, a tile that ends past the last position.
        DecodeCase{64, 2, 1, false, 48, 0, 4}, DecodeCase{64, 2, 1, true, 64, 300, 1},
        DecodeCase{128, 4, 1, true, 128, 200, 1}, DecodeCase{256, 2, 1, true, 128, 37, 4},
        DecodeCase{256, 4, 1, false, 256, 130, 1}),
    [](const auto& info) {
      const DecodeCase& c = info.param;
      return "hd" + std::to_string(c.hd) + "_gqa" + std::to_string(c.n_gqa) + "_unit" +
             std::to_string(c.heads_per_block) + (c.neox ? "_neox" : "_normal") + "_rot" + std::to_string(c.n_rot) +
             "_pos" + std::to_string(c.pos) + "_splits" + std::to_string(c.splits);
    });

struct PrefillCase {
  int hd, n_gqa;
  bool neox;
  int n_rot, out_f16;
};

class PrefillAttentionEmulation : public ::testing::TestWithParam<PrefillCase> {};

// A batch of tokens mid-context: rope_kv_store (block per token) appends them
// all, then attention (grid (KV heads, 1, tokens), all query heads of a KV
// head per block, one split) attends causally over three tiles of positions.
TEST_P(PrefillAttentionEmulation, StoresTheBatchThenMatchesFloat64Causal) {
  SKIP_WITHOUT_FIBERS();
  const PrefillCase c = GetParam();
  const int n_kv = 2, n_head = n_kv * c.n_gqa, hd = c.hd, pos0 = 290, n = 5;
  std::mt19937 rng(static_cast<unsigned>(hd * 10 + c.neox));
  Layer L(hd, n_head, n_kv, c.n_rot, c.neox, pos0 + n + 11, pos0, n, rng);
  L.state.pos = pos0;

  const int out_stride = n_head * hd + 8;
  std::vector<uint16_t> out(kLead + static_cast<size_t>(n) * out_stride + kTail, kGuard16);
  LlmAttentionJob job = L.job(c.n_gqa, 1, 0);
  job.out = reinterpret_cast<uint64_t>(out.data() + kLead);
  job.out_stride = out_stride;
  job.out_f16 = c.out_f16;
  job.n_tokens = n;

  ASSERT_EQ(launch(emu::Dim3{n, 1, 1}, [&] { rope_kv_store(job); }), "");
  for (int t = 0; t < n; ++t) L.expect_appended(t, pos0 + t);
  ASSERT_NO_FATAL_FAILURE(L.expect_cache());
  ASSERT_EQ(launch(emu::Dim3{static_cast<uint32_t>(n_kv), 1, n}, [&] { attention(job); }), "");
  ASSERT_NO_FATAL_FAILURE(L.expect_cache());

  // f16 / bf16 output: its rounding, half a unit of 2^-10 / 2^-7, dominates.
  const double tol = c.out_f16 == 2 ? 5e-3 : 7e-4;
  double worst = 0.0;
  for (int t = 0; t < n; ++t) {
    const uint16_t* row = out.data() + kLead + static_cast<size_t>(t) * out_stride;
    for (int h = 0; h < n_head; ++h) {
      const std::vector<double> want = L.attend(t, h, pos0 + t, job.scale);
      for (int d = 0; d < hd; ++d) {
        const uint16_t v = row[static_cast<size_t>(h) * hd + d];
        const double got = c.out_f16 == 2 ? cpu::bf16_to_float(v) : cpu::half_to_float(v);
        ASSERT_LE(rel_error(got, want[d]), tol) << "token " << t << " head " << h << " dim " << d;
        worst = std::max(worst, rel_error(got, want[d]));
      }
    }
    for (int i = n_head * hd; i < out_stride; ++i) ASSERT_EQ(row[i], kGuard16) << "write past the heads, token " << t;
  }
  for (int i = 0; i < kLead; ++i) ASSERT_EQ(out[i], kGuard16) << "write before the output";
  for (size_t i = out.size() - kTail; i < out.size(); ++i) ASSERT_EQ(out[i], kGuard16) << "write past the batch";
  RecordProperty("worst_rel_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Heads, PrefillAttentionEmulation,
                         ::testing::Values(PrefillCase{64, 2, false, 64, 1}, PrefillCase{256, 4, true, 128, 2}),
                         [](const auto& info) {
                           const PrefillCase& c = info.param;
                           return "hd" + std::to_string(c.hd) + "_gqa" + std::to_string(c.n_gqa) +
                                  (c.neox ? "_neox" : "_normal") + "_rot" + std::to_string(c.n_rot) +
                                  (c.out_f16 == 2 ? "_bf16" : "_f16");
                         });

}  // namespace
}  // namespace nvhcq::llm
