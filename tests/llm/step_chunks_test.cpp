// How the persistent decode step cuts matrix-vector phases into staged chunks
// (llm/gpu/step_chunks): every bulk copy a multiple of 16 bytes, every chunk
// within its slot, the rows covered, and the chunks spread over the CTAs.

#include "llm/gpu/step_chunks.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gpu_matrix_desc.h"

namespace nvhcq::llm {
namespace {

using plan_test::matrix;

LlmStepPhase phase(int act, int epilogue, std::initializer_list<LlmGpuMatrix> segments) {
  LlmStepPhase ph{};
  ph.kind = LLM_PHASE_MATVEC;
  ph.act = act;
  ph.epilogue = epilogue;
  int s = 0;
  for (const LlmGpuMatrix& m : segments) ph.mv.m[s++] = m;
  ph.mv.segments = s;
  ph.mv.cols = ph.mv.m[0].cols;
  return ph;
}

// The properties the kernel relies on, for every segment.
void expect_sound(const LlmStepPhase& ph, uint32_t slot_bytes, uint32_t ctas) {
  const bool pair = ph.epilogue == LLM_EPI_SWIGLU;
  ASSERT_GT(ph.chunk_rows, 0);
  uint64_t bytes_per_row = 0, total_bytes = 0;
  int chunks = 0;
  for (int s = 0; s < (pair ? 2 : ph.mv.segments); ++s) {
    const LlmGpuMatrix& m = ph.mv.m[s];
    for (int a = 0; a < 4; ++a) {
      EXPECT_EQ(llm_row_bytes(m.format, m.cols, a) * ph.chunk_rows % 16, 0u) << "segment " << s << " array " << a;
    }
    bytes_per_row = pair ? bytes_per_row + staged_row_bytes(m) : std::max(bytes_per_row, staged_row_bytes(m));
    total_bytes += staged_row_bytes(m) * m.rows;
    if (pair && s == 1) continue;
    EXPECT_GE(static_cast<int64_t>(ph.chunks[s]) * ph.chunk_rows, m.rows) << "segment " << s << " covered";
    EXPECT_LT(static_cast<int64_t>(ph.chunks[s] - 1) * ph.chunk_rows, m.rows) << "segment " << s << " no empty chunk";
    chunks += ph.chunks[s];
  }
  EXPECT_LE(bytes_per_row * ph.chunk_rows, slot_bytes);
  // No CTA takes more chunks than the bytes need at this chunk size (plus one
  // per segment: segments end in partial chunks).
  const uint64_t chunk_bytes = bytes_per_row * ph.chunk_rows;
  const uint64_t needed = (total_bytes + uint64_t{ctas} * chunk_bytes - 1) / (uint64_t{ctas} * chunk_bytes);
  EXPECT_LE((chunks + ctas - 1) / ctas, needed + ph.mv.segments) << chunks << " chunks";
  EXPECT_GE(ph.parts, 1);
  if (ph.parts > 1) {
    EXPECT_LE(ph.parts * ph.chunk_rows, LLM_STEP_COMPUTE_WARPS);
  }
}

TEST(StepChunks, QkvSegmentsOfALlama1B) {
  LlmStepPhase ph = phase(kActQ8K, LLM_EPI_STORE,
                          {matrix(kGpuQ6_K, 2048, 2048), matrix(kGpuQ6_K, 512, 2048), matrix(kGpuQ6_K, 512, 2048)});
  ASSERT_EQ(plan_chunks(ph, 64 * 1024, 132), "");
  expect_sound(ph, 64 * 1024, 132);
}

TEST(StepChunks, GateAndUpAreStagedAsPairs) {
  LlmStepPhase ph = phase(kActQ8K, LLM_EPI_SWIGLU, {matrix(kGpuQ4_K, 14336, 4096), matrix(kGpuQ6_K, 14336, 4096)});
  ASSERT_EQ(plan_chunks(ph, 64 * 1024, 132), "");
  expect_sound(ph, 64 * 1024, 132);
  EXPECT_EQ(ph.chunks[1], 0) << "one chunk list for the pair";
}

TEST(StepChunks, LongRowsAreSharedByWarps) {
  // 8B F16 down: 28 KiB rows, two to a slot; warps split each row's units.
  LlmStepPhase ph = phase(kActF16, LLM_EPI_ADD, {matrix(kGpuF16, 4096, 14336)});
  ASSERT_EQ(plan_chunks(ph, 64 * 1024, 132), "");
  expect_sound(ph, 64 * 1024, 132);
  EXPECT_EQ(ph.chunk_rows, 2);
  EXPECT_EQ(ph.parts, 7);
}

TEST(StepChunks, SmallRowsNeedWholeUnitsOfSixteenBytes) {
  // Q6_K rows of 256: 2 bytes of super-block scale per row, so 8 rows at least.
  LlmGpuMatrix m = matrix(kGpuQ6_K, 1024, 256);
  EXPECT_EQ(staged_row_unit(m), 8u);
  LlmStepPhase ph = phase(kActQ8K, LLM_EPI_LOGITS, {m});
  ASSERT_EQ(plan_chunks(ph, 64 * 1024, 132), "");
  expect_sound(ph, 64 * 1024, 132);
  EXPECT_EQ(ph.chunk_rows % 8, 0);
}

TEST(StepChunks, WhatCannotBeStagedIsRefusedWithAReason) {
  LlmStepPhase odd = phase(kActQ8K, LLM_EPI_STORE, {matrix(kGpuQ6_K, 100, 256)});
  EXPECT_NE(plan_chunks(odd, 64 * 1024, 132).find("multiple of 8"), std::string::npos);
  LlmStepPhase wide = phase(kActF32, LLM_EPI_STORE, {matrix(kGpuF32, 64, 32768)});
  EXPECT_NE(plan_chunks(wide, 64 * 1024, 132).find("do not fit"), std::string::npos);
}

}  // namespace
}  // namespace nvhcq::llm
