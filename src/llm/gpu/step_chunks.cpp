#include "llm/gpu/step_chunks.h"

#include <algorithm>
#include <numeric>

namespace nvhcq::llm {

uint64_t staged_row_bytes(const LlmGpuMatrix& m) {
  uint64_t total = 0;
  for (int a = 0; a < 4; ++a) total += llm_row_bytes(m.format, m.cols, a);
  return total;
}

uint32_t staged_row_unit(const LlmGpuMatrix& m) {
  uint32_t unit = 1;
  for (int a = 0; a < 4; ++a) {
    const uint64_t b = llm_row_bytes(m.format, m.cols, a);
    if (b == 0) continue;
    const uint32_t rows = 16 / std::gcd(static_cast<uint32_t>(b % 16 == 0 ? 16 : b % 16), 16u);
    unit = std::lcm(unit, rows);
  }
  return unit;
}

std::string plan_chunks(LlmStepPhase& ph, uint32_t slot_bytes, uint32_t ctas) {
  const LlmMatvecJob& mv = ph.mv;
  const bool pair = ph.epilogue == LLM_EPI_SWIGLU;
  const int matrices = pair ? 2 : mv.segments;
  // Rows of a chunk: a multiple of every matrix's unit; their bytes: the
  // largest of one segment's (a pair's rows are staged together).
  uint32_t unit = 1;
  uint64_t row_bytes = 0, total_bytes = 0;
  int64_t total_rows = 0;
  for (int i = 0; i < matrices; ++i) {
    const LlmGpuMatrix& m = mv.m[i];
    unit = std::lcm(unit, staged_row_unit(m));
    const uint64_t b = staged_row_bytes(m);
    row_bytes = pair ? row_bytes + b : std::max(row_bytes, b);
    total_bytes += b * static_cast<uint64_t>(m.rows);
    if (!pair || i == 0) total_rows += m.rows;
  }
  for (int i = 0; i < matrices; ++i) {
    if (mv.m[i].rows % unit != 0) {
      return std::to_string(mv.m[i].rows) + " rows are not a multiple of " + std::to_string(unit);
    }
  }
  const uint64_t most_rows = slot_bytes / row_bytes / unit * unit;
  if (most_rows == 0) {
    return "rows of " + std::to_string(row_bytes * unit) + " bytes do not fit a " + std::to_string(slot_bytes) +
           "-byte slot";
  }
  // As many chunks per CTA as the bytes need slots, the rows spread over them.
  const uint64_t per_cta = std::max<uint64_t>(1, (total_bytes + uint64_t{ctas} * slot_bytes - 1) / (uint64_t{ctas} * slot_bytes));
  const uint64_t want = (static_cast<uint64_t>(total_rows) + ctas * per_cta - 1) / (ctas * per_cta);
  const uint64_t rows = std::clamp<uint64_t>((want + unit - 1) / unit * unit, unit, most_rows);
  ph.chunk_rows = static_cast<int32_t>(rows);
  for (int s = 0; s < LLM_MAX_SEGMENTS; ++s) ph.chunks[s] = 0;
  for (int s = 0; s < (pair ? 1 : mv.segments); ++s) {
    ph.chunks[s] = static_cast<int32_t>((static_cast<uint64_t>(mv.m[s].rows) + rows - 1) / rows);
  }
  // Short chunks leave warps idle: then several warps share a row, each taking
  // a range of its groups (at least one per lane).
  const LlmGpuMatrix& m = mv.m[0];
  const bool quant = ph.act == kActQ8x32 || ph.act == kActQ8K;
  const int units = quant ? m.cols / LLM_GROUP : m.cols / (ph.act == kActF32 ? 4 : 8);
  ph.parts = std::clamp(LLM_STEP_COMPUTE_WARPS / static_cast<int>(rows), 1, std::max(1, units / 32));
  return {};
}

}  // namespace nvhcq::llm
