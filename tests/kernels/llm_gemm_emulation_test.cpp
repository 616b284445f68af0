// The prefill products (kernels/llm_gemm.cu on mma.sync, kernels/llm_gemm_wgmma.cu
// on wgmma) on the CPU warp emulator, against a float64 reference over the CPU's
// own dequantized weights: every GPU weight format, all three epilogues, weight
// rows and tokens that do not fill the last tile, and guard values around the
// output. This checks the kernels' indexing (swizzles, fragment layouts and
// descriptors, the pipelines, edges) without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cpu/half.h"
#include "kernels/emulation/emulation_skip.h"
#include "llm/gpu/weight_repack.h"
#include "llm/quant/quant_registry.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#define NVHCQ_KERNEL_EMULATION 1
#include "kernels/llm_gemm.cu"
#include "kernels/llm_gemm_wgmma.cu"
#pragma GCC diagnostic pop

namespace nvhcq::llm {
namespace {

constexpr int kRows = 192;  // one full tile of 128 rows and a half-empty one
constexpr int kCols = 512;  // eight k-tiles
constexpr float kGuard = -12345.5f;

// A kernel family: its token tile, shared memory and kernels. Tokens make one
// full tile and a nearly empty one.
using GemmKernel = void (*)(LlmGemmJob);
struct Family {
  const char* name;
  int tile_tokens;
  uint32_t shared_bytes;
  GemmKernel kernels[2][3];  // [bf16][epilogue]
  int tokens() const { return tile_tokens + 6; }
};
const Family kMma{"mma", GW_BN, GW_SMEM,
                  {{gemm_w_f16_store, gemm_w_f16_add, gemm_w_f16_swiglu},
                   {gemm_w_bf16_store, gemm_w_bf16_add, gemm_w_bf16_swiglu}}};
const Family kWgmma128{"wgmma128", 128, GwwTile<128>::kSmem,
                       {{gemm_wg128_f16_store, gemm_wg128_f16_add, gemm_wg128_f16_swiglu},
                        {gemm_wg128_bf16_store, gemm_wg128_bf16_add, gemm_wg128_bf16_swiglu}}};
const Family kWgmma256{"wgmma256", 256, GwwTile<256>::kSmem,
                       {{gemm_wg256_f16_store, gemm_wg256_f16_add, gemm_wg256_f16_swiglu},
                        {gemm_wg256_bf16_store, gemm_wg256_bf16_add, gemm_wg256_bf16_swiglu}}};

struct Matrix {
  GgmlType type;
  GpuMatrixLayout layout;
  std::vector<uint8_t> arrays[kGpuArrayCount];
  std::vector<double> values;  // the CPU's dequantized weights
  LlmGpuMatrix desc{};
};

Matrix make_matrix(GgmlType type, uint32_t seed) {
  Matrix m;
  m.type = type;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(static_cast<size_t>(kRows) * kCols);
  for (float& v : w) v = normal(rng);
  const QuantOps& ops = quant_ops(type);
  const uint64_t row_bytes = ops.row_bytes(kCols);
  std::vector<uint8_t> gguf(row_bytes * kRows);
  std::vector<float> back(kCols);
  for (int r = 0; r < kRows; ++r) {
    ops.from_float(w.data() + static_cast<size_t>(r) * kCols, gguf.data() + r * row_bytes, kCols);
    ops.to_float(gguf.data() + r * row_bytes, back.data(), kCols);
    m.values.insert(m.values.end(), back.begin(), back.end());
  }
  m.layout = gpu_matrix_layout(type, kRows, kCols);
  RepackTarget t;
  for (int a = 0; a < kGpuArrayCount; ++a) {
    m.arrays[a].assign(m.layout.array_bytes(static_cast<GpuArray>(a), kRows) + 16, 0);
    t.array[a] = m.layout.row_bytes[a] ? m.arrays[a].data() : nullptr;
  }
  repack_rows(type, m.layout, gguf.data(), kRows, t);
  uint64_t* addr[kGpuArrayCount] = {&m.desc.qs, &m.desc.qh, &m.desc.scales, &m.desc.super};
  for (int a = 0; a < kGpuArrayCount; ++a) {
    *addr[a] = m.layout.row_bytes[a] ? reinterpret_cast<uint64_t>(m.arrays[a].data()) : 0;
    if (m.layout.row_bytes[a]) emu::register_global(m.arrays[a].data(), m.arrays[a].size());
  }
  m.desc.format = m.layout.format;
  m.desc.rows = kRows;
  m.desc.cols = kCols;
  return m;
}

struct Case {
  const Family* family;
  GgmlType type;
  int epilogue;    // GW_STORE, GW_ADD, GW_SWIGLU
  int k_splits = 1;  // split-K CTAs (add epilogue)
  bool tail = false;  // wgmma: the last row tile's tiles split in halves (LlmGemmJob::tail_pairs)
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* epi[] = {"store", "add", "swiglu"};
  return std::string(info.param.family->name) + "_" + std::string(traits(info.param.type).name) + "_" + epi[info.param.epilogue] +
         (info.param.k_splits > 1 ? "_split" + std::to_string(info.param.k_splits) : "") +
         (info.param.tail ? "_tail" : "");
}

class LlmGemmEmulation : public ::testing::TestWithParam<Case> {};

TEST_P(LlmGemmEmulation, MatchesFloat64OverTheCpuWeights) {
  SKIP_WITHOUT_FIBERS();
  const Case c = GetParam();
  const bool bf16 = c.type == GgmlType::BF16;
  const int tokens = c.family->tokens();
  emu::clear_globals();
  Matrix w = make_matrix(c.type, 3);
  Matrix up = make_matrix(c.type, 4);

  // Activations in the product's input type, and the float64 values they hold.
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> x(static_cast<size_t>(tokens) * kCols);
  std::vector<double> xv(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = bf16 ? cpu::float_to_bf16(normal(rng)) : cpu::float_to_half(normal(rng));
    xv[i] = bf16 ? cpu::bf16_to_float(x[i]) : cpu::half_to_float(x[i]);
  }
  emu::register_global(x.data(), x.size() * 2);
  std::vector<float> bias(kRows);
  for (float& b : bias) b = normal(rng);

  // Output with guard values in its padding columns.
  const int ldy = kRows + 8;
  std::vector<float> y(static_cast<size_t>(tokens) * ldy, kGuard);
  std::vector<uint16_t> y16(static_cast<size_t>(tokens) * ldy, 0x7bcd);
  std::vector<float> start(y.size());
  for (size_t i = 0; i < y.size(); ++i) start[i] = (i % ldy) < kRows ? normal(rng) : kGuard;
  y = start;

  LlmGemmJob job{};
  job.w[0] = w.desc;
  job.w[1] = up.desc;
  job.segments = c.epilogue == GW_SWIGLU ? 2 : 1;
  job.x = reinterpret_cast<uint64_t>(x.data());
  job.y = c.epilogue == GW_SWIGLU ? reinterpret_cast<uint64_t>(y16.data()) : reinterpret_cast<uint64_t>(y.data());
  job.bias[0] = c.epilogue == GW_STORE ? reinterpret_cast<uint64_t>(bias.data()) : 0;
  job.n_tokens = tokens;
  job.ldy = ldy;
  std::vector<float> partial(static_cast<size_t>(c.k_splits) * tokens * kRows, kGuard);
  job.partial = reinterpret_cast<uint64_t>(partial.data());
  // Tail split: the last row tile's tiles (one per token tile) as pairs of
  // halves, each pair's second half running the epilogue.
  const int tiles_x = (tokens + c.family->tile_tokens - 1) / c.family->tile_tokens;
  std::vector<float> halves(2ull * tiles_x * LLM_GEMM_THREADS * c.family->tile_tokens / 2, kGuard);
  std::vector<uint32_t> counts(static_cast<size_t>(tiles_x), 0);
  if (c.tail) {
    job.tail_pairs = tiles_x;
    job.tail_partial = reinterpret_cast<uint64_t>(halves.data());
    job.tail_counts = reinterpret_cast<uint64_t>(counts.data());
  }

  emu::LaunchConfig cfg;
  cfg.block = emu::Dim3{LLM_GEMM_THREADS, 1, 1};
  cfg.grid = emu::Dim3{static_cast<uint32_t>((tokens + c.family->tile_tokens - 1) / c.family->tile_tokens),
                       static_cast<uint32_t>((kRows + (c.epilogue == GW_SWIGLU ? 63 : 127)) /
                                             (c.epilogue == GW_SWIGLU ? 64 : 128)),
                       static_cast<uint32_t>(c.k_splits)};
  cfg.shared_bytes = c.family->shared_bytes;
  if (c.tail) cfg.grid = emu::Dim3{cfg.grid.x * cfg.grid.y + static_cast<uint32_t>(tiles_x), 1, 1};
  const std::string error = emu::launch(cfg, [&] { c.family->kernels[bf16 ? 1 : 0][c.epilogue](job); });
  ASSERT_EQ(error, "");
  EXPECT_EQ(counts, std::vector<uint32_t>(counts.size(), 0)) << "the pair counters are left for the next launch";
  if (c.k_splits > 1) {
    emu::LaunchConfig red;
    red.block = emu::Dim3{128, 1, 1};
    red.grid = emu::Dim3{7, 1, 1};
    ASSERT_EQ(emu::launch(red, [&] { add_partials(y.data(), ldy, partial.data(), c.k_splits, tokens, kRows); }), "");
  }

  // Weights reach the tensor cores rounded to the input type: allow that
  // rounding (2^-8 relative for bf16, 2^-11 for f16) over a row of products.
  const double unit = bf16 ? 1.0 / 256 : 1.0 / 2048;
  double worst = 0.0;
  for (int t = 0; t < tokens; ++t) {
    for (int col = 0; col < ldy; ++col) {
      const size_t at = static_cast<size_t>(t) * ldy + col;
      if (col >= kRows) {
        if (c.epilogue == GW_SWIGLU) {
          ASSERT_EQ(y16[at], 0x7bcd) << "write past the rows, token " << t;
        } else {
          ASSERT_EQ(y[at], kGuard) << "write past the rows, token " << t;
        }
        continue;
      }
      double g = 0.0, u = 0.0, magnitude = 0.0;
      for (int k = 0; k < kCols; ++k) {
        const double xk = xv[static_cast<size_t>(t) * kCols + k];
        g += xk * w.values[static_cast<size_t>(col) * kCols + k];
        u += xk * up.values[static_cast<size_t>(col) * kCols + k];
        magnitude += std::fabs(xk * w.values[static_cast<size_t>(col) * kCols + k]);
      }
      double want, got, tol;
      if (c.epilogue == GW_SWIGLU) {
        want = g / (1.0 + std::exp(-g)) * u;
        got = bf16 ? cpu::bf16_to_float(y16[at]) : cpu::half_to_float(y16[at]);
        tol = 4 * unit * (std::fabs(want) + magnitude * (std::fabs(u) + 1.0));
      } else {
        want = c.epilogue == GW_STORE ? g + bias[static_cast<size_t>(col)] : g + start[at];
        got = y[at];
        tol = 2 * unit * magnitude + 1e-5;
      }
      ASSERT_NEAR(got, want, tol) << "token " << t << " row " << col;
      worst = std::max(worst, std::fabs(got - want) / (magnitude + 1e-9));
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Family* f : {&kMma, &kWgmma128, &kWgmma256}) {
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                       GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16, GgmlType::BF16}) {
      out.push_back({f, t, GW_STORE});
    }
    out.push_back({f, GgmlType::Q4_K, GW_ADD});
    out.push_back({f, GgmlType::F16, GW_ADD});
    out.push_back({f, GgmlType::Q6_K, GW_ADD, 3});  // eight k-tiles in shares of 2, 3 and 3
    out.push_back({f, GgmlType::F16, GW_ADD, 2});
    out.push_back({f, GgmlType::Q6_K, GW_SWIGLU});
    out.push_back({f, GgmlType::BF16, GW_SWIGLU});
    out.push_back({f, GgmlType::F16, GW_SWIGLU});
    if (f != &kMma) {  // the tail split: wgmma store and swiglu products
      out.push_back({f, GgmlType::Q6_K, GW_STORE, 1, true});
      out.push_back({f, GgmlType::Q8_0, GW_STORE, 1, true});
      out.push_back({f, GgmlType::Q4_K, GW_SWIGLU, 1, true});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Formats, LlmGemmEmulation, ::testing::ValuesIn(cases()), case_name);

// Q, K and V as one launch: three matrices of different formats, their rows
// concatenated in the output, each with its own bias.
class LlmGemmEmulationSegments : public ::testing::TestWithParam<const Family*> {};

TEST_P(LlmGemmEmulationSegments, ThreeMatricesShareOneLaunch) {
  SKIP_WITHOUT_FIBERS();
  const Family& f = *GetParam();
  const int tokens = f.tokens();
  emu::clear_globals();
  // kRows is not a whole number of tiles, so only the last segment may have it:
  // the first two are cut to 128 rows.
  Matrix a = make_matrix(GgmlType::Q4_K, 11), b = make_matrix(GgmlType::Q8_0, 12), c = make_matrix(GgmlType::Q6_K, 13);
  a.desc.rows = 128;
  b.desc.rows = 128;
  const int total = 128 + 128 + kRows;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> x(static_cast<size_t>(tokens) * kCols);
  for (auto& v : x) v = cpu::float_to_half(normal(rng));
  emu::register_global(x.data(), x.size() * 2);
  std::vector<float> bias[3];
  for (auto& bv : bias) {
    bv.resize(kRows);
    for (float& v : bv) v = normal(rng);
  }
  std::vector<float> y(static_cast<size_t>(tokens) * total, kGuard);
  LlmGemmJob job{};
  job.w[0] = a.desc;
  job.w[1] = b.desc;
  job.w[2] = c.desc;
  for (int i = 0; i < 3; ++i) job.bias[i] = reinterpret_cast<uint64_t>(bias[i].data());
  job.segments = 3;
  job.x = reinterpret_cast<uint64_t>(x.data());
  job.y = reinterpret_cast<uint64_t>(y.data());
  job.n_tokens = tokens;
  job.ldy = total;
  emu::LaunchConfig cfg;
  cfg.block = emu::Dim3{LLM_GEMM_THREADS, 1, 1};
  cfg.grid = emu::Dim3{static_cast<uint32_t>((tokens + f.tile_tokens - 1) / f.tile_tokens),
                       static_cast<uint32_t>((total + 127) / 128), 1};
  cfg.shared_bytes = f.shared_bytes;
  ASSERT_EQ(emu::launch(cfg, [&] { f.kernels[0][GW_STORE](job); }), "");
  const Matrix* mats[3] = {&a, &b, &c};
  for (int t = 0; t < tokens; ++t) {
    int col = 0;
    for (int sgm = 0; sgm < 3; ++sgm) {
      for (int r = 0; r < mats[sgm]->desc.rows; ++r, ++col) {
        double want = bias[sgm][static_cast<size_t>(r)], magnitude = 0.0;
        for (int k = 0; k < kCols; ++k) {
          const double p = cpu::half_to_float(x[static_cast<size_t>(t) * kCols + k]) *
                           mats[sgm]->values[static_cast<size_t>(r) * kCols + k];
          want += p;
          magnitude += std::fabs(p);
        }
        ASSERT_NEAR(y[static_cast<size_t>(t) * total + col], want, 2.0 / 2048 * magnitude + 1e-5)
            << "token " << t << " segment " << sgm << " row " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, LlmGemmEmulationSegments, ::testing::Values(&kMma, &kWgmma128, &kWgmma256),
                         [](const ::testing::TestParamInfo<const Family*>& info) { return std::string(info.param->name); });

}  // namespace
}  // namespace nvhcq::llm
