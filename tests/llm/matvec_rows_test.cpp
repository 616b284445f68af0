// How decode matrix-vector launches split their rows (llm/gpu/matvec_rows):
// the rows a warp of the bench models' products take, the grid that follows,
// and the NVHCQ_MATVEC_ROWS list that overrides them.

#include "llm/gpu/matvec_rows.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "gpu_matrix_desc.h"

namespace nvhcq::llm {
namespace {

// An H200's grid at most: 132 SMs, two matrix-vector blocks each.
constexpr uint64_t kMaxBlocks = 264;

using plan_test::matrix;

// Rows a warp of a product of `mats` (a swiglu product shares each pair's rows).
int rows_of(std::initializer_list<LlmGpuMatrix> mats, bool swiglu = false, int wanted = 0) {
  std::vector<LlmGpuMatrix> held(mats);
  std::vector<const LlmGpuMatrix*> segments;
  uint64_t rows = 0;
  for (const LlmGpuMatrix& m : held) {
    segments.push_back(&m);
    rows += static_cast<uint64_t>(m.rows);
  }
  if (swiglu) rows = static_cast<uint64_t>(held.front().rows);
  return rows_per_warp(segments, swiglu, rows, kMaxBlocks, wanted);
}

TEST(MatvecRows, ShortQuantizedRowsGoFourToAWarpWhereThatIsOneRound) {
  // 1B's Wo and Q/K/V (2048 columns): four rows are one round of eight loads a lane.
  EXPECT_EQ(rows_of({matrix(kGpuQ6_K, 2048, 2048)}), 4);
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 2048, 2048), matrix(kGpuQ4_K, 512, 2048), matrix(kGpuQ6_K, 512, 2048)}), 4);
  EXPECT_EQ(rows_of({matrix(kGpuQ8_0, 2048, 2048)}), 4);
}

TEST(MatvecRows, Q4KWithQ6KIsAJobOfItsOwn) {
  // Q4_K_M's Q/K/V where V is Q6_K; not one format, nor other pairs.
  const LlmGpuMatrix q = matrix(kGpuQ4_K, 4096, 4096), k = matrix(kGpuQ4_K, 1024, 4096),
                     v6 = matrix(kGpuQ6_K, 1024, 4096), v5 = matrix(kGpuQ5_K, 1024, 4096);
  EXPECT_TRUE(q4k_with_q6k({&q, &k, &v6}));
  EXPECT_TRUE(q4k_with_q6k({&v6, &q}));
  EXPECT_FALSE(q4k_with_q6k({&q, &k}));
  EXPECT_FALSE(q4k_with_q6k({&v6, &v6}));
  EXPECT_FALSE(q4k_with_q6k({&q, &k, &v5}));
  EXPECT_FALSE(q4k_with_q6k({&v5, &v6}));
}

TEST(MatvecRows, FourRowsOfTwoRoundsBecomeTwoWhereEveryWarpHasATask) {
  // 8B's Wo (4096 columns): four rows are two rounds, two are one, and 2048
  // tasks fit 264 blocks of eight warps: 256 blocks.
  for (int format : {kGpuQ4_K, kGpuQ6_K, kGpuQ8_0}) {
    EXPECT_EQ(rows_of({matrix(format, 4096, 4096)}), 2) << format;
  }
  EXPECT_EQ(matvec_blocks(4096 / 2, kMaxBlocks), 256u);
  // 8B's Q/K/V: 3072 tasks of two rows are more than the 2112 warps, so four.
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 4096, 4096), matrix(kGpuQ4_K, 1024, 4096), matrix(kGpuQ6_K, 1024, 4096)}), 4);
  EXPECT_EQ(matvec_blocks(6144 / 4, kMaxBlocks), 192u);
}

TEST(MatvecRows, LongRowsGoOneOrTwoToAWarp) {
  // 8B's down (14336 columns): two rows leave the busiest warp no more rows
  // than one; 1B's down (8192) one, its 2048 tasks within the warps.
  EXPECT_EQ(rows_of({matrix(kGpuQ6_K, 4096, 14336)}), 2);
  EXPECT_EQ(rows_of({matrix(kGpuQ6_K, 2048, 8192)}), 1);
  // 16-bit rows of 4 KB: 1B F16's Wo one a warp, its Q/K/V two.
  EXPECT_EQ(rows_of({matrix(kGpuF16, 2048, 2048)}), 1);
  EXPECT_EQ(rows_of({matrix(kGpuF16, 2048, 2048), matrix(kGpuF16, 512, 2048), matrix(kGpuF16, 512, 2048)}), 2);
}

TEST(MatvecRows, PipelinedGateUpTakesTheRowsThatLeaveTheBusiestWarpFewest) {
  // 8B's gate/up: 14336 rows over 2112 warps, one at a time (seven for the
  // busiest warp, eight at two rows).
  const LlmGpuMatrix gate = matrix(kGpuQ4_K, 14336, 4096), up = gate;
  EXPECT_TRUE(pipelined({&gate, &up}, true));
  EXPECT_FALSE(pipelined({&gate, &up}, false));  // (K-quant store and add products: the plain loop)
  const LlmGpuMatrix q5_gate = matrix(kGpuQ5_0, 14336, 4096), q4_up = matrix(kGpuQ4_K, 14336, 4096);
  EXPECT_FALSE(pipelined({&q5_gate, &q5_gate}, true));  // (spilled pipelined)
  EXPECT_FALSE(pipelined({&q5_gate, &q4_up}, true));    // (two formats)
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 14336, 4096), matrix(kGpuQ4_K, 14336, 4096)}, true), 1);
}

TEST(MatvecRows, AWantedCountIsTakenWhereItFits) {
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 4096, 4096)}, false, 4), 4);
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 4096, 4096)}, false, 1), 1);
  EXPECT_EQ(rows_of({matrix(kGpuF16, 2048, 2048)}, false, 2), 2);
  // Not where it does not divide the rows (4098 = 2 x 2049)...
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 4098, 4096)}, false, 4), rows_of({matrix(kGpuQ4_K, 4098, 4096)}));
  EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 4098, 4096)}), 2);
  // ...nor where a pipelined round would pass a row's end (256 columns: 8 groups).
  const int plan = rows_of({matrix(kGpuQ4_K, 1024, 256), matrix(kGpuQ4_K, 1024, 256)}, true);
  for (int wanted : {1, 2, 4}) {
    if (wanted == plan) continue;
    EXPECT_EQ(rows_of({matrix(kGpuQ4_K, 1024, 256), matrix(kGpuQ4_K, 1024, 256)}, true, wanted), plan) << wanted;
  }
}

TEST(MatvecRows, GateUpClustersWhereTheyFillTheGpu) {
  // "auto": clusters of four in a self-ordered step, 3/4 of the slots or more.
  EXPECT_EQ(swiglu_cluster_size("auto", true, 56, kMaxBlocks), 4);   // 8B: 224 of 264
  EXPECT_EQ(swiglu_cluster_size("auto", false, 56, kMaxBlocks), 0);  // stream order
  EXPECT_EQ(swiglu_cluster_size("auto", true, 50, kMaxBlocks), 4);   // 200 of 264
  EXPECT_EQ(swiglu_cluster_size("auto", true, 49, kMaxBlocks), 0);   // 196 of 264
  EXPECT_EQ(swiglu_cluster_size("auto", true, 32, kMaxBlocks), 0);   // 1B: 128 of 264
  EXPECT_EQ(swiglu_cluster_size("auto", true, 56, 216), 0);          // 8B on 108 SMs: more than one wave
  EXPECT_EQ(swiglu_cluster_size("auto", true, 66, kMaxBlocks), 4);   // every slot
  // "on": eight where they fit, else four; "off" none.
  EXPECT_EQ(swiglu_cluster_size("on", false, 3, kMaxBlocks), 8);  // the tiny test model
  EXPECT_EQ(swiglu_cluster_size("on", true, 32, kMaxBlocks), 8);
  EXPECT_EQ(swiglu_cluster_size("on", true, 56, kMaxBlocks), 4);
  EXPECT_EQ(swiglu_cluster_size("on", true, 67, kMaxBlocks), 0);
  EXPECT_EQ(swiglu_cluster_size("off", true, 56, kMaxBlocks), 0);
}

TEST(MatvecRows, TheListNamesRowsPerProduct) {
  EXPECT_EQ(matvec_rows_for("", "wo"), 0);
  EXPECT_EQ(matvec_rows_for("wo:2,qkv:4", "wo"), 2);
  EXPECT_EQ(matvec_rows_for("wo:2,qkv:4", "qkv"), 4);
  EXPECT_EQ(matvec_rows_for("wo:2,qkv:4", "ffn_down"), 0);
  EXPECT_EQ(matvec_rows_for("wo:2,wo:1", "wo"), 1);  // the last one
  EXPECT_EQ(matvec_rows_for("logits:1,", "logits"), 1);
  for (const char* bad : {"wo", "wo:3", "wo:", ":2", "wo:2,qkv:x", "wo:22", "wo:2;qkv:4", ",wo:2"}) {
    EXPECT_THROW(matvec_rows_for(bad, ""), UsageError) << bad;
  }
}

}  // namespace
}  // namespace nvhcq::llm
