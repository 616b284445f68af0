// A matrix-vector warp's first rows staged in shared memory
// (LlmMatvecJob::stage_warps). Weights depend on nothing the launches ahead
// write, so a block copies its warps' first rows_per_warp rows into shared
// memory with bulk copies (no register held for them) as soon as it starts --
// in a self-ordered decode step while the launch ahead still drains -- and only
// then waits. After the wait and its activation preparation a warp computes
// those rows from shared memory and streams the rest of its rows as before.
// Most launches of a 1B model's step are one task a warp: the whole product is
// then on the chip by the time the activations are.
#pragma once

#include "llm_bulk_copy.cuh"
#include "llm_jobs.cuh"

// A warp's staged rows: views of rows [0, R) of each matrix it multiplies
// (swiglu: gate and up), their arrays in shared memory.
struct StagedTask {
  LlmGpuMatrix m[2];
  int row0;  // the output row of view row 0
};

// Rows [r, r + rows) of one array (row_bytes each) at dst + *at, copied by the
// warp's lane 0 and counted on bar; returns the view's array. A range that is
// not 16-byte aligned (tiny matrices) stays where it is, in global memory: the
// shared-memory loops read through generic addresses, which serve either.
__device__ __forceinline__ uint64_t stage_array(uint64_t base, uint64_t row_bytes, int r, int rows, uint8_t* dst,
                                                uint32_t* at, uint64_t* bar) {
  if (base == 0 || row_bytes == 0) return 0;
  const uint64_t src = base + (uint64_t)r * row_bytes;
  const uint32_t bytes = (uint32_t)(row_bytes * (uint64_t)rows);
  if (((src | bytes) & 15) != 0) return src;
  const uint64_t where = (uint64_t)(dst + *at);
  if ((threadIdx.x & 31) == 0) {
    mbarrier_add_bytes(bar, bytes);
    bulk_load(dst + *at, (const void*)src, bytes, bar);
  }
  *at += bytes;
  return where;
}

// Rows [r, r + rows) of m staged from dst + *at on, array by array: the view
// (row 0 = row r).
__device__ __forceinline__ LlmGpuMatrix stage_matrix(const LlmGpuMatrix& m, int r, int rows, uint8_t* dst,
                                                     uint32_t* at, uint64_t* bar) {
  LlmGpuMatrix v = m;
  v.qs = stage_array(m.qs, llm_row_bytes(m.format, m.cols, 0), r, rows, dst, at, bar);
  v.qh = stage_array(m.qh, llm_row_bytes(m.format, m.cols, 1), r, rows, dst, at, bar);
  v.scales = stage_array(m.scales, llm_row_bytes(m.format, m.cols, 2), r, rows, dst, at, bar);
  v.super = stage_array(m.super, llm_row_bytes(m.format, m.cols, 3), r, rows, dst, at, bar);
  v.rows = rows;
  return v;
}
