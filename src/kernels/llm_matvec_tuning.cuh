// The matrix-vector kernels' tuning constants that the host's launch plan
// reads too (llm/gpu/matvec_rows.cpp: the rows a warp takes depend on the loads a
// lane keeps in flight and on which products are pipelined). Each is a
// default: NVHCQ_KERNEL_DEFINES overrides it in the kernels only, for
// measurements (docs/llm-gpu.md), and the plan keeps the default.
#pragma once

#include "llm_formats.cuh"

// Group loads a lane issues before its first product, from global memory:
// enough to cover its latency (llm_matvec_rows.cuh).
#ifndef MV_IN_FLIGHT
#define MV_IN_FLIGHT 8
#endif

// F16/BF16/F32 rows: 16-byte units a lane loads before its first product (8 was
// the fastest of 4, 8, 12 and 16 on the H200: docs/perf-notes.md).
#ifndef MV_IN_FLIGHT_PLAIN
#define MV_IN_FLIGHT_PLAIN MV_IN_FLIGHT
#endif

// Which quantized products llm_matvec.cu pipelines, a bit mask: 1 K-quant
// gate/up, 2 other K-quant products, 4 Q4_0/Q4_1/Q8_0 gate/up, 8 their other
// products. The shorter products (one or two tasks a warp) were slower
// pipelined, with half the loads in flight per round (docs/perf-notes.md);
// Q5_0 and Q5_1 always take the plain loop (pipelined, the kernel spilled).
#ifndef MV_PIPELINE
#define MV_PIPELINE 5
#endif
// Groups per lane in flight in a pipelined round (the round being computed
// holds as many again).
#ifndef MV_PIPE_IN_FLIGHT
#define MV_PIPE_IN_FLIGHT (MV_IN_FLIGHT / 2)
#endif

// Loads in flight per lane shared among R rows: per row at least one, whatever
// the tuning constants say.
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr int mv_per_row(int in_flight, int rows) {
  return in_flight / rows > 0 ? in_flight / rows : 1;
}

// MV_PIPELINE's bit for K-quant (q8k activations) or Q4_0/Q4_1/Q8_0 (q8x32)
// products, gate/up (swiglu) or the others.
LLM_HD bool llm_mv_pipe_bit(bool k_quant, bool swiglu) {
  return (MV_PIPELINE & ((swiglu ? 1 : 2) << (k_quant ? 0 : 2))) != 0;
}

// Whether a product whose matrices all have weight format `format` runs the
// pipelined loop (llm_matvec.cu's warp_rows builds it for these formats).
LLM_HD bool llm_mv_pipelined(int format, bool swiglu) {
  switch (format) {
    case kGpuQ4_K:
    case kGpuQ5_K:
    case kGpuQ6_K: return llm_mv_pipe_bit(true, swiglu);
    case kGpuQ4_0:
    case kGpuQ4_1:
    case kGpuQ8_0: return llm_mv_pipe_bit(false, swiglu);
    default: return false;
  }
}

// Whether a product whose matrices all have weight format `format` has an
// early-loading kernel (llm_matvec.cu's matvec_early builds it for these: the
// pipelined and the 16-bit gate/up products, and the others' common formats).
// Not the logits: their warps take many rows each, and a first round is
// little of it.
LLM_HD bool llm_mv_early(int format, bool swiglu) {
  if (swiglu) return llm_mv_pipelined(format, true) || llm_format_16bit(format);
  switch (format) {
    case kGpuQ4_K:
    case kGpuQ6_K:
    case kGpuQ4_0:
    case kGpuQ8_0:
    case kGpuF16:
    case kGpuBF16: return true;
    default: return false;
  }
}

// Whether a store or add product whose matrices differ in format has an
// early-loading kernel: where each is Q4_K or Q6_K (Q4_K_M's Q/K/V in the
// layers whose V is Q6_K, which would take the plain loop otherwise). It
// comes from a build of its own (kMvBuildQ4KQ6K), and loads early the warps
// whose first rows are Q4_K (llm_matvec.cu's early_rows).
LLM_HD bool llm_mv_early_mixed(int format) { return format == kGpuQ4_K || format == kGpuQ6_K; }

// MV_FORMAT of the build of llm_matvec.cu for jobs of Q4_K and Q6_K rows (not
// a weight format): it holds both formats and, of the early store and add
// kernels' paths, only the one for such jobs. In the build of every format
// that kernel spilled 16-24 bytes a thread, in this one none.
// (An enumerator: a namespace-scope constexpr variable became a device global
// in the CUBIN.)
enum : int { kMvBuildQ4KQ6K = 16 };

// Rounds of an early-loading quantized store or add product's R rows of
// `cols` columns (llm_matvec.cu's QuantRound: one round is the warp's whole
// rows, loaded before the wait).
LLM_HD int llm_mv_early_rounds(int cols, int rows_per_warp) {
  const int per_round = 32 * mv_per_row(MV_IN_FLIGHT, rows_per_warp);
  return (cols / LLM_GROUP + per_round - 1) / per_round;
}

// Bytes of one row's round of a 16-bit product with R rows a warp: 32 lanes'
// MV_IN_FLIGHT_PLAIN / R 16-byte units (llm_matvec.cu's PlainRound).
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr int llm_mv_plain_round_bytes(int rows_per_warp) {
  return 32 * 16 * mv_per_row(MV_IN_FLIGHT_PLAIN, rows_per_warp);
}

// Shared memory an early 16-bit gate/up block stages its warps' first rounds
// in (llm_matvec.cu's staged_swiglu_rows): round 0 of a warp's R gate and R up
// rows, for each of `warps` warps.
LLM_HD int llm_mv_plain_stage_bytes(int rows_per_warp, int warps) {
  return warps * 2 * rows_per_warp * llm_mv_plain_round_bytes(rows_per_warp);
}
