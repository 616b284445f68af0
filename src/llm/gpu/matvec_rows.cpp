#include "llm/gpu/matvec_rows.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/llm_matvec_tuning.cuh"

namespace nvhcq::llm {

int one_format(const std::vector<const LlmGpuMatrix*>& mats) {
  const int f = mats.front()->format;
  return std::all_of(mats.begin(), mats.end(), [&](const LlmGpuMatrix* m) { return m->format == f; }) ? f : -1;
}

bool q4k_with_q6k(const std::vector<const LlmGpuMatrix*>& mats) {
  return one_format(mats) < 0 &&
         std::all_of(mats.begin(), mats.end(), [](const LlmGpuMatrix* m) { return llm_mv_early_mixed(m->format); });
}

bool pipelined(const std::vector<const LlmGpuMatrix*>& mats, bool swiglu) {
  const int f = one_format(mats);
  return f >= 0 && llm_mv_pipelined(f, swiglu);
}

uint64_t matvec_blocks(uint64_t tasks, uint64_t max_blocks) {
  return std::clamp<uint64_t>((tasks + kMatvecWarps - 1) / kMatvecWarps, 1, max_blocks);
}

// Rows a warp takes at once (each lane keeps about eight 16-byte loads in
// flight whatever the rows; see llm_matvec.cu). Rows of at most four loads a
// lane go four to a warp: a short product then takes fewer
// blocks and leaves its SMs room for the next launch's blocks, which start
// waiting before it ends (8B's Q/K/V and Wo at four rows instead of two: 1.0%
// and 2.5% faster decode of Q4_K_M and Q6_K on the H200, when that was
// measured). Where four rows are two rounds of loads a warp, two rows are one
// and every warp still has a task at most, a warp takes two: 8B's Wo (4096
// rows of 4096) in 256 blocks instead of 128 decoded 8B Q4_K_M and Q6_K
// 1.2-1.6% faster since the tagged values; at one row, or 1B's Wo at two (its
// four rows are one round), decode was 0.3-7% slower, and so was 8B's Q/K/V
// at two rows (more tasks than warps). Longer rows go one at
// a time, or two where that leaves the busiest warp no more rows (1B F16's
// Q/K/V and gate/up, 8B's down: 1B F16 1.2% faster); two of 1B's down rows a
// warp (twice the busiest warp's rows), or four F16 rows of 4 KB, were 3-4%
// slower (docs/perf-notes.md). The pipelined loop keeps its loads in flight
// whatever the rows (kU groups of R rows, kU * R fixed), so there the rows are
// those that leave the busiest warp the fewest, of the counts whose rounds do
// not pass the row's end (8B's gate/up: seven rows instead of four tasks of
// two; 1-1.6% faster decode on the H200).
int rows_per_warp(const std::vector<const LlmGpuMatrix*>& segments, bool swiglu, uint64_t rows,
                  uint64_t max_blocks, int wanted) {
  const LlmGpuMatrix& m = *segments.front();
  const bool plain = m.format == kGpuF16 || m.format == kGpuBF16 || m.format == kGpuF32;
  const bool pipe = pipelined(segments, swiglu);
  const uint64_t groups = static_cast<uint64_t>(m.cols) / LLM_GROUP;
  const uint64_t loads = plain ? (llm_row_bytes(m.format, m.cols, 0) + 511) / 512 : (groups + 31) / 32;
  auto divides = [&](int k) {
    return std::all_of(segments.begin(), segments.end(), [&](const LlmGpuMatrix* s) { return s->rows % k == 0; });
  };
  auto busiest_rows = [&](int k) {
    const uint64_t tasks = rows / k;
    const uint64_t warps = kMatvecWarps * matvec_blocks(tasks, max_blocks);
    return (tasks + warps - 1) / warps * k;
  };
  // (A pipelined round must not pass the row's end.)
  auto round_fits = [&](int k) {
    return !pipe || 32 * static_cast<uint64_t>(mv_per_row(MV_PIPE_IN_FLIGHT, k)) <= groups;
  };
  if (wanted > 0 && divides(wanted) && round_fits(wanted)) return wanted;
  int r = loads <= 4 ? 4 : 1;
  while (r > 1 && !divides(r)) r /= 2;
  if (r == 1 && divides(2) && busiest_rows(2) <= busiest_rows(1)) r = 2;
  if (!pipe) {
    // Two rows where four would be two rounds a warp and two are one, with a
    // task for each warp at most.
    if (r == 4 && !plain && llm_mv_early_rounds(m.cols, 4) > 1 && llm_mv_early_rounds(m.cols, 2) == 1 &&
        divides(2) && rows / 2 <= kMatvecWarps * max_blocks) {
      r = 2;
    }
    return r;
  }
  for (int k : {4, 2, 1}) {  // ties keep the larger count
    if (!divides(k) || !round_fits(k)) continue;
    if (busiest_rows(k) < busiest_rows(r)) r = k;
  }
  return r;
}

int swiglu_cluster_size(const std::string& setting, bool chained, uint64_t supers, uint64_t slots) {
  if (setting == "on") return supers * 8 <= slots ? 8 : supers * 4 <= slots ? 4 : 0;
  if (setting != "auto" || !chained) return 0;
  return supers * 4 <= slots && 4 * (supers * 4) >= 3 * slots ? 4 : 0;
}

int matvec_rows_for(const std::string& spec, const std::string& what) {
  int named = 0;
  size_t at = 0;
  while (at < spec.size()) {
    const size_t end = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, end - at);
    const size_t colon = item.find(':');
    const std::string count = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (colon == 0 || (count != "1" && count != "2" && count != "4")) {
      throw UsageError("matrix-vector rows a warp are 'product:1|2|4,...' (NVHCQ_MATVEC_ROWS), not '" + spec + "'");
    }
    if (item.substr(0, colon) == what) named = count[0] - '0';
    at = end + 1;
  }
  return named;
}

}  // namespace nvhcq::llm
