// The activation preparation of the decode products (kernels/llm_act_prep.cuh)
// on the CPU warp emulator: the input, RMS-normalized or not, quantized into
// shared memory exactly as the CPU quantizes it (ggml's Q8_1 / Q8_K, f16, bf16,
// f32), for short and long vectors (a block's threads take one to nine chunks
// each, the last pass partial; normalized ones of up to 16 values a thread
// held in registers), with 256 threads (the matrix-vector kernels)
// and 480 (the persistent step); and prepared in slices by the blocks of a
// thread-block cluster, which together write every value once.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu/half.h"
#include "kernels/emulation/emulation_skip.h"
#include "kernels/llm_emulation_reference.h"
#include "llm/quant/blocks.h"
#include "llm/quant/quant_rows.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/gemm_prims.cuh"
#include "kernels/llm_act_prep.cuh"
#include "kernels/llm_jobs.cuh"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

constexpr float kEps = 1e-5f;

struct PrepCase {
  int kind;
  int threads;
  int cols;
  bool norm;
};

std::string case_name(const PrepCase& c) {
  static const char* const kinds[] = {"q8x32", "q8k", "f16", "bf16", "f32"};
  return std::string(kinds[c.kind]) + "_t" + std::to_string(c.threads) + "_c" + std::to_string(c.cols) +
         (c.norm ? "_norm" : "");
}

void PrintTo(const PrepCase& c, std::ostream* os) { *os << case_name(c); }

// The view `v` of shared memory at `base` moved onto the copy at `copy`.
ActView moved(const ActView& v, const uint8_t* base, const uint8_t* copy) {
  auto at = [&](const void* p) { return p ? copy + (static_cast<const uint8_t*>(p) - base) : nullptr; };
  ActView m{};
  m.q = reinterpret_cast<const int8_t*>(at(v.q));
  m.d = reinterpret_cast<const float*>(at(v.d));
  m.s = reinterpret_cast<const float*>(at(v.s));
  m.sum = reinterpret_cast<const int*>(at(v.sum));
  m.h = reinterpret_cast<const uint16_t*>(at(v.h));
  m.f = reinterpret_cast<const float*>(at(v.f));
  return m;
}

// Runs the preparation; its shared memory is copied into `smem` and `view` points into that copy.
template <int kAct, int kThreads, class Share = ActShare<1>>
std::string prepare(const PrepCase& c, const float* x, const float* norm, std::vector<uint8_t>& smem,
                    ActView& view) {
  emu::LaunchConfig cfg;
  cfg.grid = emu::Dim3{1, 1, 1};
  cfg.block = emu::Dim3{kThreads, 1, 1};
  cfg.shared_bytes = llm_act_smem_bytes(kAct, c.cols);
  return emu::launch(cfg, [&] {
    __shared__ double red[kThreads / 32];
    uint8_t* s = dynamic_smem();
    const ActView v = prepare_activations<kAct, kThreads, CtaSync, Share>(x, norm, kEps, c.cols, s, red);
    __syncthreads();
    if (threadIdx.x == 0) {
      std::memcpy(smem.data(), s, smem.size());
      view = moved(v, s, smem.data());
    }
  });
}

template <int kThreads, class Share = ActShare<1>>
std::string prepare_kind(const PrepCase& c, const float* x, const float* norm, std::vector<uint8_t>& smem,
                         ActView& view) {
  switch (c.kind) {
    case kActQ8x32: return prepare<kActQ8x32, kThreads, Share>(c, x, norm, smem, view);
    case kActQ8K: return prepare<kActQ8K, kThreads, Share>(c, x, norm, smem, view);
    case kActF16: return prepare<kActF16, kThreads, Share>(c, x, norm, smem, view);
    case kActBF16: return prepare<kActBF16, kThreads, Share>(c, x, norm, smem, view);
    default: return prepare<kActF32, kThreads, Share>(c, x, norm, smem, view);
  }
}

// The input of a case: values with the special cases of the quantizers, and
// norm weights.
void make_inputs(const PrepCase& c, std::vector<float>& x, std::vector<float>& w) {
  std::mt19937 rng(static_cast<uint32_t>(c.cols + c.kind));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  x.assign(static_cast<size_t>(c.cols), 0.0f);
  w.assign(x.size(), 0.0f);
  for (float& v : x) v = 3.0f * normal(rng);
  for (float& v : w) v = 1.0f + 0.25f * normal(rng);
  // One all-zero super-block (Q8_K's special case) in the middle.
  std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
  // Q8_K's scale follows the first value of largest magnitude: two equal
  // magnitudes of opposite sign in the next super-block, in different lanes
  // (values 5 and 200), and in one lane in the one after (17 and 19). The
  // second taken instead would flip every value's sign.
  for (const auto& [first, second] : {std::pair<int, int>{512 + 5, 512 + 200}, std::pair<int, int>{768 + 17, 768 + 19}}) {
    x[first] = -40.0f;
    x[second] = 40.0f;
    w[first] = w[second] = 1.0f;
  }
}

// The prepared activations `v` against the CPU's quantization of the input.
void expect_as_the_cpu(const PrepCase& c, const std::vector<float>& x, const std::vector<float>& w,
                       const ActView& v) {
  const std::vector<float> a = c.norm ? rms_normalized(x, w, kEps) : x;
  const int n = c.cols;
  if (c.kind == kActQ8x32) {
    std::vector<BlockQ8_1> want(static_cast<size_t>(n / LLM_GROUP));
    quantize_row_q8_1(a.data(), want.data(), n);
    for (int g = 0; g < n / LLM_GROUP; ++g) {
      int sum = 0;
      for (int i = 0; i < LLM_GROUP; ++i) {
        ASSERT_EQ(v.q[g * LLM_GROUP + i], want[g].qs[i]) << "group " << g << " value " << i;
        sum += want[g].qs[i];
      }
      EXPECT_EQ(v.d[g], cpu::half_to_float(want[g].d)) << "group " << g;
      EXPECT_EQ(v.s[g], cpu::half_to_float(want[g].s)) << "group " << g;
      EXPECT_EQ(v.sum[g], sum) << "group " << g;
    }
  } else if (c.kind == kActQ8K) {
    std::vector<BlockQ8_K> want(static_cast<size_t>(n / LLM_SUPER));
    quantize_row_q8_k(a.data(), want.data(), n);
    for (int sb = 0; sb < n / LLM_SUPER; ++sb) {
      for (int i = 0; i < LLM_SUPER; ++i) {
        ASSERT_EQ(v.q[sb * LLM_SUPER + i], want[sb].qs[i]) << "super-block " << sb << " value " << i;
      }
      EXPECT_EQ(v.d[sb], want[sb].d) << "super-block " << sb;
      for (int j = 0; j < LLM_SUPER / 16; ++j) EXPECT_EQ(v.sum[sb * 16 + j], want[sb].bsums[j]) << sb << "/" << j;
    }
  } else {
    for (int i = 0; i < n; ++i) {
      const float want = c.kind == kActF32    ? a[i]
                         : c.kind == kActF16 ? cpu::half_to_float(cpu::float_to_half(a[i]))
                                             : cpu::bf16_to_float(cpu::float_to_bf16(a[i]));
      const float got = c.kind == kActF32    ? v.f[i]
                        : c.kind == kActF16 ? cpu::half_to_float(v.h[i])
                                            : cpu::bf16_to_float(v.h[i]);
      ASSERT_EQ(got, want) << "value " << i;
    }
  }
}

class LlmActPrepEmulation : public ::testing::TestWithParam<PrepCase> {};

TEST_P(LlmActPrepEmulation, QuantizesAsTheCpuDoes) {
  SKIP_WITHOUT_FIBERS();
  const PrepCase c = GetParam();
  std::vector<float> x, w;
  make_inputs(c, x, w);
  std::vector<uint8_t> smem(llm_act_smem_bytes(c.kind, c.cols), 0xA5);
  ActView v{};
  const float* norm = c.norm ? w.data() : nullptr;
  const std::string error = c.threads == 256 ? prepare_kind<256>(c, x.data(), norm, smem, v)
                                             : prepare_kind<480>(c, x.data(), norm, smem, v);
  ASSERT_EQ(error, "");
  expect_as_the_cpu(c, x, w, v);
}

// Q8_K's scale follows the first value of largest magnitude: super-blocks
// whose largest magnitude is reached more than once, by one sign or both, in
// one lane (values 8 l .. 8 l + 7) or in several, the first of either sign
// (and one whose largest magnitude is a lone value of each sign in turn), as
// the CPU quantizes them.
TEST(LlmActPrepPeaks, TiesAreBrokenAsTheCpuBreaksThem) {
  SKIP_WITHOUT_FIBERS();
  constexpr int kSupers = 64;
  const PrepCase c{kActQ8K, 256, kSupers * LLM_SUPER, false};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> small(-1.0f, 1.0f);
  std::uniform_int_distribution<int> index(0, LLM_SUPER - 1), copies(2, 4);
  std::vector<float> x(static_cast<size_t>(c.cols)), w(x.size(), 1.0f);
  for (float& v : x) v = small(rng);
  for (int sb = 0; sb < kSupers; ++sb) {
    float* b = x.data() + sb * LLM_SUPER;
    const float top = 2.0f + static_cast<float>(sb % 5);
    const int first = index(rng);
    switch (sb % 4) {
      case 0:  // a tie in one lane: the first of the two, either sign
        b[first & ~7] = (sb & 4) ? top : -top;
        b[(first & ~7) + 1 + first % 7] = (sb & 4) ? -top : top;
        break;
      case 1:  // ties over lanes, each sign
        for (int k = copies(rng); k > 0; --k) b[index(rng)] = (rng() & 1) ? top : -top;
        break;
      case 2:  // one sign only, several times
        for (int k = copies(rng); k > 0; --k) b[index(rng)] = (sb & 4) ? top : -top;
        break;
      default:  // a lone peak, either sign
        b[first] = (sb & 4) ? top : -top;
        break;
    }
  }
  std::vector<uint8_t> smem(llm_act_smem_bytes(c.kind, c.cols), 0xA5);
  ActView v{};
  ASSERT_EQ(prepare_kind<256>(c, x.data(), nullptr, smem, v), "");
  expect_as_the_cpu(c, x, w, v);
}

// A cluster's preparation, one block at a time: SplitShare<n, rank> is block
// `rank` of a cluster of n with its stores into the cluster's shared memory
// made into its own only, each byte's writer recorded, and the blocks' partial
// sums of squares exchanged through the record (a block's total needs every
// block's partial: the normalized cases run the cluster twice).
struct SplitRecord {
  std::vector<int> writer;  // per byte of the activations: the rank that wrote it, or -1
  bool written_twice = false;
  double partials[8] = {};
};
SplitRecord* g_split = nullptr;

template <int kClusterBlocks, int kRank>
struct SplitShare {
  enum { kBlocks = kClusterBlocks };
  static int rank() { return kRank; }
  static void started() {}
  static void ready() {}
  static void finish() {}
  template <class T>
  static void put(T* p, T v) {
    *p = v;
    const size_t at = static_cast<size_t>(reinterpret_cast<uint8_t*>(p) - dynamic_smem());
    for (size_t i = 0; i < sizeof(T); ++i) {
      int& who = g_split->writer.at(at + i);
      if (who >= 0 && who != kRank) g_split->written_twice = true;
      who = kRank;
    }
  }
  static double total(double part, double*) {
    g_split->partials[kRank] = part;
    double t = 0.0;
    for (int r = 0; r < kBlocks; ++r) t += g_split->partials[r];
    return t;
  }
};

// Block `rank` of a cluster of n (n up to 3).
template <int kClusterBlocks>
std::string prepare_rank(int rank, const PrepCase& c, const float* x, const float* norm, std::vector<uint8_t>& smem,
                         ActView& view) {
  if (rank == 0) return prepare_kind<256, SplitShare<kClusterBlocks, 0>>(c, x, norm, smem, view);
  if constexpr (kClusterBlocks > 1) {
    if (rank == 1) return prepare_kind<256, SplitShare<kClusterBlocks, 1>>(c, x, norm, smem, view);
  }
  if constexpr (kClusterBlocks > 2) {
    if (rank == 2) return prepare_kind<256, SplitShare<kClusterBlocks, 2>>(c, x, norm, smem, view);
  }
  return "no rank " + std::to_string(rank);
}

template <int kClusterBlocks>
void expect_slices_make_the_whole(const PrepCase& c) {
  std::vector<float> x, w;
  make_inputs(c, x, w);
  const float* norm = c.norm ? w.data() : nullptr;
  const size_t bytes = llm_act_smem_bytes(c.kind, c.cols);
  SplitRecord alone, cluster;
  alone.writer.assign(bytes, -1);
  cluster.writer.assign(bytes, -1);
  // What one block alone writes.
  std::vector<uint8_t> whole(bytes);
  ActView v{};
  g_split = &alone;
  ASSERT_EQ(prepare_rank<1>(0, c, x.data(), norm, whole, v), "");
  // The cluster's blocks, each into its own copy (twice when normalized).
  g_split = &cluster;
  std::vector<std::vector<uint8_t>> part(kClusterBlocks, std::vector<uint8_t>(bytes));
  for (int pass = 0; pass < (c.norm ? 2 : 1); ++pass) {
    cluster.writer.assign(bytes, -1);
    for (int r = 0; r < kClusterBlocks; ++r) {
      ActView ignored{};
      ASSERT_EQ(prepare_rank<kClusterBlocks>(r, c, x.data(), norm, part[r], ignored), "");
    }
  }
  g_split = nullptr;
  EXPECT_FALSE(cluster.written_twice) << "two blocks wrote the same byte";
  std::vector<uint8_t> merged(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(cluster.writer[i] >= 0, alone.writer[i] >= 0) << "byte " << i << " of " << bytes;
    if (cluster.writer[i] >= 0) merged[i] = part[cluster.writer[i]][i];
  }
  // `v` points into `whole`; the same offsets into the merged bytes.
  expect_as_the_cpu(c, x, w, moved(v, whole.data(), merged.data()));
}

// (The matrix-vector kernels' blocks of 256 threads.)
class LlmActPrepClusterEmulation : public ::testing::TestWithParam<PrepCase> {};

TEST_P(LlmActPrepClusterEmulation, SlicesMakeTheWholeVector) {
  SKIP_WITHOUT_FIBERS();
  const PrepCase c = GetParam();
  expect_slices_make_the_whole<2>(c);
  expect_slices_make_the_whole<3>(c);
}

std::vector<PrepCase> cases() {
  std::vector<PrepCase> out;
  // 4,352 values: 17 super-blocks, fewer than the warps of 480 threads take in
  // one pass; 8,448 and 17,152: several passes, the last of one super-block or
  // a few. Normalized inputs of up to 16 values a thread are held in registers
  // (prepare_held): 1,280 (a partial last pass), 2,048 and 4,096 (the largest
  // for 256 threads; 4,352 is the first past it).
  for (int kind : {kActQ8x32, kActQ8K, kActF16, kActBF16, kActF32}) {
    for (int threads : {256, 480}) {
      for (int cols : {1280, 2048, 4096, 4352, 8448, 17152}) {
        for (bool norm : {false, true}) out.push_back(PrepCase{kind, threads, cols, norm});
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kinds, LlmActPrepEmulation, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<PrepCase>& info) { return case_name(info.param); });

std::vector<PrepCase> cluster_cases() {
  std::vector<PrepCase> out;
  for (const PrepCase& c : cases()) {
    if (c.threads == 256) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kinds, LlmActPrepClusterEmulation, ::testing::ValuesIn(cluster_cases()),
                         [](const ::testing::TestParamInfo<PrepCase>& info) { return case_name(info.param); });

}  // namespace
}  // namespace nvhcq::llm
