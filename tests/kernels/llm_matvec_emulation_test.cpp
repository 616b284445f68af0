// The decode matrix-vector kernels (kernels/llm_matvec.cu) on the CPU warp
// emulator, built with every quantized product pipelined (MV_PIPELINE 15), so
// that the pipeline's bookkeeping -- rounds of a row, the up rows after the gate
// rows, a warp's next task, segments, a last round of fewer groups -- is checked
// without a GPU. Each product must equal the CPU's dot product of the same
// weight row with the activations quantized as the CPU quantizes them, up to
// the order of float sums. Matrices whose formats differ take the plain loop
// (and Q4_K with Q6_K, where the plan launches it, the early kernel).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/emulation/emulation_skip.h"
#include "kernels/llm_emulation_reference.h"
#include "kernels/llm_matvec_test_matrix.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
// Loads in flight are written and read under the same bounds test, which the
// host compiler does not see.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define NVHCQ_KERNEL_EMULATION 1
#define MV_PIPELINE 15
#include "kernels/llm_matvec.cu"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

// 17 super-blocks, 136 groups: with one row a warp, two rounds of 128 and 8
// groups per lane; with four, five rounds, the last of 8.
constexpr int kCols = 4352;
constexpr int kBlocks = 2;    // 16 warps
constexpr int kTasks = 37;    // 2 or 3 tasks a warp, rows_per_warp rows each
constexpr float kGuard = -1234.5f;

// A rows x kCols matrix of `type`.
struct Matrix : TestMatrix {
  Matrix(GgmlType t, int n_rows, std::mt19937& rng) : TestMatrix(t, n_rows, kCols, rng) {}
};

// matvec_<act>_<epi>, or with kEarly its early-loading kernel (matvec_early),
// of build B (MvBuild; by default the build that holds every product).
template <int kAct, int kEpi, bool kEarly, class B = MvBuild<>>
std::string run_kernel(const LlmMatvecJob& job) {
  emu::LaunchConfig cfg;
  cfg.grid = emu::Dim3{kBlocks, 1, 1};
  cfg.block = emu::Dim3{MV_THREADS, 1, 1};
  cfg.shared_bytes = llm_act_smem_bytes(kAct, job.cols);
  LlmMatvecJob j = job;
  if constexpr (kEarly && kEpi == LLM_EPI_SWIGLU && (kAct == kActF16 || kAct == kActBF16)) {
    // The staged first rounds after the activations, as the plan lays them out.
    j.stage_at = static_cast<int32_t>((cfg.shared_bytes + 127) / 128 * 128);
    cfg.shared_bytes = static_cast<uint32_t>(j.stage_at + llm_mv_plain_stage_bytes(j.rows_per_warp, MV_WARPS));
  }
  return emu::launch(cfg, [&] {
    if constexpr (kEarly) {
      matvec_early<kAct, kEpi, B>(j);
    } else {
      matvec<kAct, kEpi, B>(j);
    }
  });
}

template <int kEpi, bool kEarly>
std::string run_kind(int act, const LlmMatvecJob& job) {
  switch (act) {
    case kActQ8x32: return run_kernel<kActQ8x32, kEpi, kEarly>(job);
    case kActQ8K: return run_kernel<kActQ8K, kEpi, kEarly>(job);
    case kActF16: return run_kernel<kActF16, kEpi, kEarly>(job);
    default: return "no kernel for this activation kind";
  }
}

template <int kEpi>
std::string run(int act, const LlmMatvecJob& job, bool early = false) {
  return early ? run_kind<kEpi, true>(act, job) : run_kind<kEpi, false>(act, job);
}

struct MatvecCase {
  std::vector<GgmlType> types;  // one per segment (swiglu: gate and up)
  int rows_per_warp;
};

std::string case_name(const MatvecCase& c) {
  std::string name;
  for (GgmlType t : c.types) name += std::string(traits(t).name) + "_";
  return name + "r" + std::to_string(c.rows_per_warp);
}

void PrintTo(const MatvecCase& c, std::ostream* os) { *os << case_name(c); }

class LlmMatvecEmulation : public ::testing::TestWithParam<MatvecCase> {
 protected:
  LlmMatvecJob job_template(const std::vector<const Matrix*>& mats, const std::vector<float>& x,
                            std::vector<float>& out, LlmStepState& state) const {
    LlmMatvecJob job{};
    job.segments = static_cast<int32_t>(mats.size());
    for (size_t s = 0; s < mats.size(); ++s) job.m[s] = mats[s]->desc;
    job.cols = kCols;
    job.in = reinterpret_cast<uint64_t>(x.data());
    job.out = reinterpret_cast<uint64_t>(out.data() + 1);
    job.state = reinterpret_cast<uint64_t>(&state);
    job.eps = 1e-5f;
    job.rows_per_warp = GetParam().rows_per_warp;
    return job;
  }
};

// The segments of a product: a matrix of types[s] with R * tasks[s] rows each.
struct SegmentMatrices {
  std::vector<std::unique_ptr<Matrix>> mats;
  std::vector<const Matrix*> segments;
  int rows = 0;
  SegmentMatrices(const std::vector<GgmlType>& types, int R, const std::vector<int>& tasks, std::mt19937& rng) {
    for (size_t s = 0; s < types.size(); ++s) {
      mats.push_back(std::make_unique<Matrix>(types[s], R * tasks[s], rng));
      segments.push_back(mats.back().get());
      rows += mats.back()->rows;
    }
  }
};

// Whether the plan would launch the early-loading kernel of these matrices
// (one format that llm_mv_early names, or store and add segments of formats
// that llm_mv_early_mixed names).
bool early_kernel(const std::vector<GgmlType>& types, bool swiglu) {
  const int format = gpu_matrix_layout(types.front(), 1, kCols).format;
  bool one = true, mixed = !swiglu;
  for (GgmlType t : types) {
    const int f = gpu_matrix_layout(t, 1, kCols).format;
    one = one && f == format;
    mixed = mixed && llm_mv_early_mixed(f);
  }
  return one ? llm_mv_early(format, swiglu) : mixed;
}

// Store with a bias per segment, and add into what the output held; with the
// kernels of every product and, where the plan would launch them, the
// early-loading ones (chained, as in a self-ordered step: every block, with
// tasks or without, counts itself finished once). One matrix of 37 or 5 tasks
// (fewer than warps), or segments of R x {25, 7, 5} (the warps' tasks cross
// their boundaries) or R x {2, 2, 1}.
TEST_P(LlmMatvecEmulation, StoreAndAddMatchTheCpuDotProducts) {
  SKIP_WITHOUT_FIBERS();
  const MatvecCase& c = GetParam();
  std::mt19937 rng(11);
  const int R = c.rows_per_warp;
  const std::vector<float> x = random_vector(kCols, 1.0f, rng);
  for (const bool few : {false, true}) {
    const std::vector<int> seg_tasks = c.types.size() == 1 ? std::vector<int>{few ? 5 : kTasks}
                                       : few                ? std::vector<int>{2, 2, 1}
                                                            : std::vector<int>{kTasks - 12, 7, 5};
    const SegmentMatrices product(c.types, R, seg_tasks, rng);
    const auto& [mats, segments, rows] = product;
    std::vector<std::vector<float>> bias;
    for (const auto& m : mats) bias.push_back(random_vector(static_cast<size_t>(m->rows), 1.0f, rng));
    const std::vector<float> base = random_vector(static_cast<size_t>(rows), 1.0f, rng);
    const int act = llm_act_kind(mats[0]->desc.format);

    for (const bool early : {false, true}) {
      if (early && !early_kernel(c.types, false)) continue;
      for (const bool add : {false, true}) {
        std::vector<float> out(static_cast<size_t>(rows) + 2, std::nanf(""));
        out.front() = out.back() = kGuard;
        if (add) std::copy(base.begin(), base.end(), out.begin() + 1);
        LlmStepState state{};
        LlmMatvecJob job = job_template(segments, x, out, state);
        job.rows = rows;
        if (early) job.chain = LlmChainLink{1, 0};
        if (!add) {
          for (size_t s = 0; s < mats.size(); ++s) job.bias[s] = reinterpret_cast<uint64_t>(bias[s].data());
        }
        ASSERT_EQ(add ? run<LLM_EPI_ADD>(act, job, early) : run<LLM_EPI_STORE>(act, job, early), "");
        EXPECT_EQ(state.chain_done, early ? static_cast<uint32_t>(kBlocks) : 0u) << "blocks counted finished";
        EXPECT_EQ(out.front(), kGuard);
        EXPECT_EQ(out.back(), kGuard);
        int row = 0;
        for (size_t s = 0; s < mats.size(); ++s) {
          for (int r = 0; r < mats[s]->rows; ++r, ++row) {
            const auto [cpu, magnitude] = mats[s]->dot(r, x);
            const double want = cpu + (add ? base[row] : bias[s][r]);
            ASSERT_NEAR(out[row + 1], want, 2e-5 * magnitude + 1e-5 * std::fabs(want))
                << (early ? "early " : "") << (add ? "add" : "store") << (few ? ", few tasks" : "") << ", segment "
                << s << " row " << r;
          }
        }
      }
    }
  }
}

// The store kernels tagging their outputs for the attention (LLM_HANDOFF_TAGGED,
// llm_tagged.cuh): each row's word holds the plain store kernel's bits of the
// row and the tag the step's chain_base and the job's offset make (a base
// near the top of the count's range, so the tag wraps), in the plain loop and
// where the plan would launch it early; every block counts itself finished.
TEST_P(LlmMatvecEmulation, TaggedStoreHoldsTheStoreBitsAndTheTag) {
  SKIP_WITHOUT_FIBERS();
  const MatvecCase& c = GetParam();
  std::mt19937 rng(13);
  const int R = c.rows_per_warp;
  const std::vector<float> x = random_vector(kCols, 1.0f, rng);
  std::vector<int> tasks(c.types.size(), 6);
  tasks[0] = kTasks - 12;
  const SegmentMatrices product(c.types, R, tasks, rng);
  const auto& [mats, segments, rows] = product;
  std::vector<std::vector<float>> bias;
  for (const auto& m : mats) bias.push_back(random_vector(static_cast<size_t>(m->rows), 1.0f, rng));
  const int act = llm_act_kind(mats[0]->desc.format);
  constexpr uint32_t kBase = 0xfffffffau;
  constexpr int32_t kOffset = 9;
  for (const bool early : {false, true}) {
    if (early && !early_kernel(c.types, false)) continue;
    std::vector<float> plain(static_cast<size_t>(rows) + 2, std::nanf(""));
    std::vector<uint64_t> tagged(static_cast<size_t>(rows) + 2, 0x7fc00000u);
    LlmStepState state{};
    state.chain_base = state.chain_done = kBase;
    LlmMatvecJob job = job_template(segments, x, plain, state);
    job.rows = rows;
    job.chain = LlmChainLink{1, 0};
    for (size_t s = 0; s < mats.size(); ++s) job.bias[s] = reinterpret_cast<uint64_t>(bias[s].data());
    ASSERT_EQ(run<LLM_EPI_STORE>(act, job, early), "");
    job.out = reinterpret_cast<uint64_t>(tagged.data() + 1);
    job.out_handoff = LLM_HANDOFF_TAGGED;
    job.out_tag = kOffset;
    ASSERT_EQ(run<LLM_EPI_STORE>(act, job, early), "");
    EXPECT_EQ(state.chain_done, kBase + 2u * kBlocks) << "blocks counted finished";
    EXPECT_EQ(tagged.front(), 0x7fc00000u);
    EXPECT_EQ(tagged.back(), 0x7fc00000u);
    for (int r = 0; r < rows; ++r) {
      const uint64_t word = tagged[static_cast<size_t>(r) + 1];
      ASSERT_EQ(static_cast<uint32_t>(word >> 32), kBase + kOffset) << (early ? "early, " : "") << "row " << r;
      ASSERT_EQ(static_cast<uint32_t>(word), cpu::float_bits(plain[static_cast<size_t>(r) + 1]))
          << (early ? "early, " : "") << "row " << r;
    }
  }
}

// SwiGLU of gate and up rows (with the input RMS-normalized first; also by
// the early-loading kernel where the plan would launch it, chained), and the
// logits with their argmax.
TEST_P(LlmMatvecEmulation, SwigluAndLogitsMatchTheCpuDotProducts) {
  SKIP_WITHOUT_FIBERS();
  const MatvecCase& c = GetParam();
  std::mt19937 rng(12);
  const int rows = c.rows_per_warp * kTasks;
  auto gate = std::make_unique<Matrix>(c.types.front(), rows, rng);
  auto up = std::make_unique<Matrix>(c.types.back(), rows, rng);
  const std::vector<float> x = random_vector(kCols, 3.0f, rng);
  std::vector<float> norm = random_vector(kCols, 1.0f, rng);
  for (float& w : norm) w = 1.0f + 0.25f * w;
  const int act = llm_act_kind(gate->desc.format);
  std::vector<float> plain;  // the plain kernel's outputs, which the early one's must equal bit for bit
  for (const bool early : {false, true}) {
    if (early && !early_kernel({c.types.front(), c.types.back()}, true)) continue;
    std::vector<float> out(static_cast<size_t>(rows) + 2, std::nanf(""));
    out.front() = out.back() = kGuard;
    LlmStepState state{};
    LlmMatvecJob job = job_template({gate.get(), up.get()}, x, out, state);
    job.rows = rows;
    job.norm = reinterpret_cast<uint64_t>(norm.data());
    if (early) job.chain = LlmChainLink{1, 0};
    ASSERT_EQ(run<LLM_EPI_SWIGLU>(act, job, early), "");
    EXPECT_EQ(state.chain_done, early ? static_cast<uint32_t>(kBlocks) : 0u) << "blocks counted finished";
    EXPECT_EQ(out.front(), kGuard);
    EXPECT_EQ(out.back(), kGuard);
    const std::vector<float> xn = rms_normalized(x, norm, job.eps);
    for (int r = 0; r < rows; ++r) {
      const auto [g, mag_g] = gate->dot(r, xn);
      const auto [u, mag_u] = up->dot(r, xn);
      const double sig = 1.0 / (1.0 + std::exp(-g)), silu = g * sig;
      const double want = silu * u;
      // d silu / dg is at most 1.1 in magnitude.
      const double tol = 2e-5 * (1.1 * mag_g * std::fabs(u) + std::fabs(silu) * mag_u) + 1e-5 * std::fabs(want);
      ASSERT_NEAR(out[r + 1], want, tol) << (early ? "early " : "") << "row " << r;
    }
    if (!early) {
      plain = out;
    } else {
      // (Its first rounds are loaded before the wait: one, or two with
      // several rows a warp, or for 16-bit rows staged in shared memory; the
      // sums keep their order.)
      EXPECT_EQ(std::memcmp(out.data(), plain.data(), out.size() * sizeof(float)), 0) << "early against plain";
    }
  }
  {
    std::vector<float> out(static_cast<size_t>(rows) + 2, std::nanf(""));
    out.front() = out.back() = kGuard;
    LlmStepState state{};
    LlmMatvecJob job = job_template({gate.get()}, x, out, state);
    job.rows = rows;
    ASSERT_EQ(run<LLM_EPI_LOGITS>(act, job), "");
    unsigned long long best = 0;
    for (int r = 0; r < rows; ++r) {
      const auto [cpu, magnitude] = gate->dot(r, x);
      ASSERT_NEAR(out[r + 1], cpu, 2e-5 * magnitude + 1e-5 * std::fabs(cpu)) << "logit " << r;
      const unsigned long long key = argmax_key(out[r + 1], r);
      best = key > best ? key : best;
    }
    EXPECT_EQ(state.argmax, best) << "the argmax of the logits written";
  }
}

// Hand-offs (kernels/llm_handoff.cuh). A swiglu_handoff kernel of four rows a
// warp (each block's round a whole group) hands its output over: the same bits
// as the CPU's Q8_1 of the f32 outputs the swiglu kernel writes. An add_handoff
// kernel (Q8_0/Q8_1 activations) takes a hand-off as its input: the CPU's
// products with those activations. Also the early-loading kernels, chained;
// pairs of blocks (two rows a warp) need clusters, which the emulator does
// not run.
TEST_P(LlmMatvecEmulation, HandoffsMatchTheCpu) {
  SKIP_WITHOUT_FIBERS();
  const MatvecCase& c = GetParam();
  std::mt19937 rng(13);
  const int act = llm_act_kind(gpu_matrix_layout(c.types.front(), 1, kCols).format);
  if (c.types.size() > 1 || (act != kActQ8x32 && act != kActQ8K)) GTEST_SKIP() << "one quantized matrix only";
  if (act == kActQ8K && c.rows_per_warp != 4) {
    GTEST_SKIP() << "Q8_K inputs are not handed over, and their gate/up hands over here with four rows a warp";
  }
  const std::vector<float> x = random_vector(kCols, 3.0f, rng);
  if (c.rows_per_warp == 4) {
    constexpr int kRows = 4 * 40;  // rounds of 32 rows: three for block 0, two for block 1
    auto gate = std::make_unique<Matrix>(c.types.front(), kRows, rng);
    auto up = std::make_unique<Matrix>(c.types.front(), kRows, rng);
    for (const bool early : {false, true}) {
      if (early && !early_kernel(c.types, true)) continue;
      std::vector<float> plain(kRows + 2, std::nanf(""));
      LlmStepState state{};
      LlmMatvecJob job = job_template({gate.get(), up.get()}, x, plain, state);
      job.rows = kRows;
      if (early) job.chain = LlmChainLink{1, 0};
      ASSERT_EQ(run<LLM_EPI_SWIGLU>(act, job, early), "");

      std::vector<uint8_t> handed(llm_act_smem_bytes(kActQ8x32, kRows), 0xA5);
      state = LlmStepState{};
      job.out = reinterpret_cast<uint64_t>(handed.data());
      job.out_handoff = LLM_HANDOFF_Q8X32;
      job.stage_at = static_cast<int32_t>((llm_act_smem_bytes(act, kCols) + 15) / 16 * 16);
      const int rounds = llm_swiglu_stage_rounds(kRows / 4, kBlocks * MV_WARPS);
      emu::LaunchConfig cfg;
      cfg.grid = emu::Dim3{kBlocks, 1, 1};
      cfg.block = emu::Dim3{MV_THREADS, 1, 1};
      cfg.shared_bytes = static_cast<uint32_t>(job.stage_at) + llm_swiglu_stage_bytes(rounds, 32);
      ASSERT_EQ(emu::launch(cfg,
                            [&] {
                              constexpr int kEpi = LLM_EPI_SWIGLU | MV_HANDOFF;
                              if (act == kActQ8x32) {
                                early ? matvec_early<kActQ8x32, kEpi>(job) : matvec<kActQ8x32, kEpi>(job);
                              } else {
                                early ? matvec_early<kActQ8K, kEpi>(job) : matvec<kActQ8K, kEpi>(job);
                              }
                            }),
                "");
      EXPECT_EQ(state.chain_done, early ? static_cast<uint32_t>(kBlocks) : 0u) << "blocks counted finished";
      expect_handoff(handoff_reference(std::vector<float>(plain.begin() + 1, plain.end() - 1)),
                     q8x32_view(handed.data(), kRows), early ? "early swiglu" : "swiglu");
    }
  }
  if (act != kActQ8x32) return;
  // The add product's input: x handed over, as the CPU quantizes it.
  const HandoffReference in = handoff_reference(x);
  std::vector<uint8_t> handed(llm_act_smem_bytes(kActQ8x32, kCols), 0);
  const ActView hv = q8x32_view(handed.data(), kCols);
  std::memcpy(const_cast<int8_t*>(hv.q), in.q.data(), kCols);
  std::memcpy(const_cast<float*>(hv.d), in.d.data(), 4 * in.d.size());
  std::memcpy(const_cast<float*>(hv.s), in.s.data(), 4 * in.s.size());
  std::memcpy(const_cast<int*>(hv.sum), in.sums.data(), 4 * in.sums.size());
  auto m = std::make_unique<Matrix>(c.types.front(), c.rows_per_warp * kTasks, rng);
  const std::vector<float> base = random_vector(static_cast<size_t>(m->rows), 1.0f, rng);
  for (const bool early : {false, true}) {
    if (early && !early_kernel(c.types, false)) continue;
    std::vector<float> out(static_cast<size_t>(m->rows) + 2, std::nanf(""));
    std::copy(base.begin(), base.end(), out.begin() + 1);
    LlmStepState state{};
    LlmMatvecJob job = job_template({m.get()}, x, out, state);
    job.rows = m->rows;
    job.in = reinterpret_cast<uint64_t>(handed.data());
    if (early) job.chain = LlmChainLink{1, 0};
    constexpr int kEpi = LLM_EPI_ADD | MV_HANDOFF;
    const std::string error = early ? run_kernel<kActQ8x32, kEpi, true>(job) : run_kernel<kActQ8x32, kEpi, false>(job);
    ASSERT_EQ(error, "");
    for (int r = 0; r < m->rows; ++r) {
      const auto [cpu, magnitude] = m->dot(r, x);
      const double want = cpu + base[r];
      ASSERT_NEAR(out[r + 1], want, 2e-5 * magnitude + 1e-5 * std::fabs(want)) << (early ? "early " : "") << "row " << r;
    }
  }
}

// A build of one activation kind, weight format and row count (MvBuild<kAct,
// kFormat, R>: what LlmKernels::matvec loads for a decode product; kFormat 0
// for segments of several formats) against the build of every product, over
// the same jobs: store (plain and, where the plan launches it, early-loading)
// and swiglu give the same bits.
template <int kAct, int kFormat, int R>
void expect_build_gives_the_same_bits(const std::vector<GgmlType>& types, std::mt19937& rng) {
  using Build = MvBuild<kAct, kFormat, R>;
  SCOPED_TRACE(case_name(MatvecCase{types, R}));
  std::vector<std::unique_ptr<Matrix>> mats;
  LlmMatvecJob job{};
  job.segments = static_cast<int32_t>(types.size());
  for (size_t s = 0; s < types.size(); ++s) {
    mats.push_back(std::make_unique<Matrix>(types[s], R * (kTasks - 10 * static_cast<int>(s)), rng));
    job.m[s] = mats.back()->desc;
    job.rows += mats.back()->rows;
  }
  const std::vector<float> x = random_vector(kCols, 1.0f, rng);
  std::vector<float> norm = random_vector(kCols, 1.0f, rng);
  for (float& w : norm) w = 1.0f + 0.25f * w;
  job.cols = kCols;
  job.in = reinterpret_cast<uint64_t>(x.data());
  job.eps = 1e-5f;
  job.rows_per_warp = R;
  // Poisoned outputs of every build, each run of the same job.
  auto outputs = [&](auto run_one) {
    std::vector<float> out(static_cast<size_t>(job.rows) + 2, std::nanf(""));
    LlmStepState state{};
    LlmMatvecJob j = job;
    j.out = reinterpret_cast<uint64_t>(out.data() + 1);
    j.state = reinterpret_cast<uint64_t>(&state);
    EXPECT_EQ(run_one(j), "");
    return out;
  };
  auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b, const char* what) {
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), 4 * a.size()), 0) << what;
  };
  same_bits(outputs([](const LlmMatvecJob& j) { return run_kernel<kAct, LLM_EPI_STORE, false>(j); }),
            outputs([](const LlmMatvecJob& j) { return run_kernel<kAct, LLM_EPI_STORE, false, Build>(j); }), "store");
  if (kFormat != 0 && early_kernel(types, false)) {
    same_bits(outputs([](const LlmMatvecJob& j) { return run_kernel<kAct, LLM_EPI_STORE, true>(j); }),
              outputs([](const LlmMatvecJob& j) { return run_kernel<kAct, LLM_EPI_STORE, true, Build>(j); }),
              "early store");
  }
  if (types.size() == 1) {
    // gate and up: the matrix twice; the input RMS-normalized.
    job.segments = 2;
    job.m[1] = job.m[0];
    job.norm = reinterpret_cast<uint64_t>(norm.data());
    same_bits(outputs([](const LlmMatvecJob& j) { return run_kernel<kAct, LLM_EPI_SWIGLU, false>(j); }),
              outputs([](const LlmMatvecJob& j) { return run_kernel<kAct, LLM_EPI_SWIGLU, false, Build>(j); }),
              "swiglu");
  }
}

TEST(LlmMatvecBuilds, OneKindFormatAndRowCountGiveTheSameBitsAsEveryProduct) {
  SKIP_WITHOUT_FIBERS();
  std::mt19937 rng(13);
  expect_build_gives_the_same_bits<kActQ8K, kGpuQ6_K, 4>({GgmlType::Q6_K}, rng);
  expect_build_gives_the_same_bits<kActQ8K, kGpuQ6_K, 1>({GgmlType::Q6_K}, rng);
  expect_build_gives_the_same_bits<kActQ8K, kGpuQ4_K, 2>({GgmlType::Q4_K, GgmlType::Q4_K}, rng);
  expect_build_gives_the_same_bits<kActQ8K, 0, 2>({GgmlType::Q4_K, GgmlType::Q6_K}, rng);
  expect_build_gives_the_same_bits<kActQ8K, kMvBuildQ4KQ6K, 4>({GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q6_K}, rng);
  expect_build_gives_the_same_bits<kActQ8K, kMvBuildQ4KQ6K, 1>({GgmlType::Q6_K, GgmlType::Q4_K}, rng);
  expect_build_gives_the_same_bits<kActQ8x32, kGpuQ8_0, 4>({GgmlType::Q8_0}, rng);
  expect_build_gives_the_same_bits<kActQ8x32, kGpuQ5_0, 2>({GgmlType::Q5_0}, rng);
  expect_build_gives_the_same_bits<kActF16, kGpuF16, 2>({GgmlType::F16}, rng);
}

// What a build holds, as the kernels test it at compile time: another kind,
// format or row count than its own is left out (a trap in the kernels).
static_assert(MvBuild<kActQ8K, kGpuQ6_K, 4>::holds_act<kActQ8K>() &&
              !MvBuild<kActQ8K, kGpuQ6_K, 4>::holds_act<kActQ8x32>() &&
              !MvBuild<-1, kGpuQ6_K, 0>::holds_act<kActF16>() && MvBuild<>::holds_act<kActF32>());
static_assert(MvBuild<kActQ8K, kGpuQ6_K, 4>::holds_format<kGpuQ6_K>() &&
              !MvBuild<kActQ8K, kGpuQ6_K, 4>::holds_format<kGpuQ4_K>() && MvBuild<kActQ8K, 0, 4>::holds_format<kGpuQ4_K>());
static_assert(MvBuild<kActQ8K, kMvBuildQ4KQ6K, 4>::holds_format<kGpuQ4_K>() &&
              MvBuild<kActQ8K, kMvBuildQ4KQ6K, 4>::holds_format<kGpuQ6_K>() &&
              !MvBuild<kActQ8K, kMvBuildQ4KQ6K, 4>::holds_format<kGpuQ5_K>() &&
              MvBuild<kActQ8K, kMvBuildQ4KQ6K, 4>::holds_act<kActQ8K>() &&
              !MvBuild<-1, kMvBuildQ4KQ6K, 0>::holds_act<kActQ8x32>());
static_assert(MvBuild<kActQ8K, kGpuQ6_K, 4>::holds_rows<4>() && !MvBuild<kActQ8K, kGpuQ6_K, 4>::holds_rows<1>() &&
              MvBuild<kActQ8K, kGpuQ6_K, 0>::holds_rows<2>());

std::vector<MatvecCase> cases() {
  std::vector<MatvecCase> out;
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q4_0, GgmlType::Q4_1,
                     GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::F16}) {
    for (int r : {1, 2, 4}) out.push_back(MatvecCase{{t}, r});
  }
  // Segments of one format (pipelined) and of several (the plain loop, and
  // for Q4_K with Q6_K the early kernel's rounds of either format).
  out.push_back(MatvecCase{{GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q4_K}, 1});
  out.push_back(MatvecCase{{GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q6_K}, 2});
  out.push_back(MatvecCase{{GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q6_K}, 4});
  out.push_back(MatvecCase{{GgmlType::Q6_K, GgmlType::Q4_K}, 1});
  out.push_back(MatvecCase{{GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q8_0}, 4});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Formats, LlmMatvecEmulation, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
}  // namespace nvhcq::llm
