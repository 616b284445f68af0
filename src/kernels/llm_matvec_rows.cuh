// The inner loop of every LLM matrix-vector product: a warp's dot products of
// whole or partial weight rows with activations prepared in shared memory
// (llm_act_prep.cuh). Lanes take consecutive 32-weight groups (F16/BF16/F32:
// 16-byte units), so each load instruction of a warp reads one contiguous run,
// and every lane has MV_IN_FLIGHT groups of loads issued before it computes.
//
// The weights come either from global memory (kShared false: streamed once,
// llm_matvec.cu) or from a copy of whole rows staged in shared memory (kShared
// true: the persistent decode step, llm_decode_step.cu). A staged copy keeps the
// global layout of llm_formats.cuh for its rows, so one set of loops serves both.
#pragma once

#include "llm_act_prep.cuh"
#include "llm_matvec_tuning.cuh"

// Group loads a lane issues before its first product from shared memory: fewer
// than from global memory (MV_IN_FLIGHT; the persistent step kernel has 128
// registers per thread: four in flight spilled 160 bytes per thread, two
// spill 32).
#ifndef MV_IN_FLIGHT_SHARED
#define MV_IN_FLIGHT_SHARED 2
#endif
template <bool kShared>
__device__ __forceinline__ uint4 mv_load16(const uint8_t* p) {
  return kShared ? *(const uint4*)p : load_stream16(p);
}
template <bool kShared>
__device__ __forceinline__ uint2 mv_load8(const uint8_t* p) {
  return kShared ? *(const uint2*)p : load_stream8(p);
}
template <bool kShared>
__device__ __forceinline__ uint32_t mv_load4(const uint8_t* p) {
  return kShared ? *(const uint32_t*)p : load_stream4(p);
}
template <bool kShared>
__device__ __forceinline__ uint32_t mv_load2(const uint8_t* p) {
  return kShared ? *(const uint16_t*)p : load_stream2(p);
}

// The prepared activations are read with shared-memory loads. The view's
// pointers are generic, and the compiler, which cannot tell where they point,
// read them with generic loads (LD.E, slower than LDS); the SASS of the
// products showed it (docs/perf-notes.md). Volatile, so that no read moves
// above the barrier that ends the preparation.
#ifdef NVHCQ_KERNEL_EMULATION
// (As on the GPU, a load of n bytes must be n-byte aligned: a misaligned one
// there is Xid 13, "Misaligned Address".)
inline uint4 act_load16(const void* p) { return *(const uint4*)::nvhcq::emu::aligned_shared(p, 16); }
inline uint2 act_load8(const void* p) { return *(const uint2*)::nvhcq::emu::aligned_shared(p, 8); }
inline uint32_t act_load4(const void* p) { return *(const uint32_t*)::nvhcq::emu::aligned_shared(p, 4); }
#else
__device__ __forceinline__ uint32_t act_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ uint4 act_load16(const void* p) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(act_address(p)));
  return v;
}
__device__ __forceinline__ uint2 act_load8(const void* p) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(act_address(p)));
  return v;
}
__device__ __forceinline__ uint32_t act_load4(const void* p) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(act_address(p)));
  return v;
}
#endif

// One group of a quantized row, as loaded.
struct Loaded {
  uint4 qs, qs2;
  uint2 qh;
  uint32_t sc, sup;
};

// Group `row_group` of m (row * groups per row + group) as loaded. The index is
// 32-bit (a matrix of up to 2^32 groups, 137G weights): 64-bit index arithmetic
// took twice the instructions per load.
template <bool kShared>
__device__ __forceinline__ Loaded load_group(const LlmGpuMatrix& m, uint32_t row_group, int format) {
  Loaded l;
  const uint8_t* qs = (const uint8_t*)m.qs;
  if (format == kGpuQ8_0) {
    l.qs = mv_load16<kShared>(qs + (size_t)row_group * 32);
    l.qs2 = mv_load16<kShared>(qs + (size_t)row_group * 32 + 16);
  } else {
    l.qs = mv_load16<kShared>(qs + (size_t)row_group * 16);
  }
  if (format == kGpuQ5_0 || format == kGpuQ5_1 || format == kGpuQ5_K) {
    l.qh.x = mv_load4<kShared>((const uint8_t*)m.qh + (size_t)row_group * 4);
  } else if (format == kGpuQ6_K) {
    l.qh = mv_load8<kShared>((const uint8_t*)m.qh + (size_t)row_group * 8);
  }
  if (format == kGpuQ4_1 || format == kGpuQ5_1) {
    l.sc = mv_load4<kShared>((const uint8_t*)m.scales + (size_t)row_group * 4);
  } else {
    l.sc = mv_load2<kShared>((const uint8_t*)m.scales + (size_t)row_group * 2);
  }
  if (format == kGpuQ4_K || format == kGpuQ5_K) {
    l.sup = kShared ? ((const uint32_t*)m.super)[row_group / LLM_GROUPS_PER_SUPER]
                    : __ldg((const uint32_t*)m.super + row_group / LLM_GROUPS_PER_SUPER);
  } else if (format == kGpuQ6_K) {
    l.sup = kShared ? ((const uint16_t*)m.super)[row_group / LLM_GROUPS_PER_SUPER]
                    : __ldg((const uint16_t*)m.super + row_group / LLM_GROUPS_PER_SUPER);
  }
  return l;
}

__device__ __forceinline__ LlmActGroup act_group(const ActView& a, int g) {
  const uint4 lo = act_load16(a.q + g * LLM_GROUP), hi = act_load16(a.q + g * LLM_GROUP + 16);
  LlmActGroup r;
  r.x[0] = lo.x; r.x[1] = lo.y; r.x[2] = lo.z; r.x[3] = lo.w;
  r.x[4] = hi.x; r.x[5] = hi.y; r.x[6] = hi.z; r.x[7] = hi.w;
  return r;
}

__device__ __forceinline__ LlmQ8x32 act_q8x32(const ActView& a, int g) {
  LlmQ8x32 x;
  x.d = __uint_as_float(act_load4(a.d + g));
  x.s = __uint_as_float(act_load4(a.s + g));
  x.sum = (int)act_load4(a.sum + g);
  return x;
}

__device__ __forceinline__ LlmQ8K act_q8k(const ActView& a, int g) {
  LlmQ8K x;
  x.d = __uint_as_float(act_load4(a.d + g / LLM_GROUPS_PER_SUPER));
  const uint2 sums = act_load8(a.sum + 2 * g);
  x.bsum_lo = (int)sums.x;
  x.bsum_hi = (int)sums.y;
  return x;
}

template <int kFormat>
__device__ __forceinline__ float group_dot(const Loaded& l, const ActView& a, int g) {
  const uint32_t q[4] = {l.qs.x, l.qs.y, l.qs.z, l.qs.w};
  const LlmActGroup ag = act_group(a, g);
  if (kFormat == kGpuQ4_0) return llm_group_q4_0(q, (uint16_t)l.sc, ag, act_q8x32(a, g));
  if (kFormat == kGpuQ4_1) return llm_group_q4_1(q, l.sc, ag, act_q8x32(a, g));
  if (kFormat == kGpuQ5_0) return llm_group_q5_0(q, l.qh.x, (uint16_t)l.sc, ag, act_q8x32(a, g));
  if (kFormat == kGpuQ5_1) return llm_group_q5_1(q, l.qh.x, l.sc, ag, act_q8x32(a, g));
  if (kFormat == kGpuQ8_0) {
    const uint32_t q8[8] = {l.qs.x, l.qs.y, l.qs.z, l.qs.w, l.qs2.x, l.qs2.y, l.qs2.z, l.qs2.w};
    return llm_group_q8_0(q8, (uint16_t)l.sc, ag, act_q8x32(a, g));
  }
  if (kFormat == kGpuQ4_K) return llm_group_q4_k(q, l.sc, l.sup, ag, act_q8k(a, g));
  if (kFormat == kGpuQ5_K) return llm_group_q5_k(q, l.qh.x, l.sc, l.sup, ag, act_q8k(a, g));
  return llm_group_q6_k(q, l.qh.x, l.qh.y, l.sc, (uint16_t)l.sup, ag, act_q8k(a, g));
}

// A round of a quantized product: R rows, kU groups of each per lane, loaded
// (all loads issued first) and then multiplied with the activations. Past the
// range's end (a last round of fewer groups) a lane loads and multiplies the
// range's last group again and drops the product, so that a round is straight
// code: guarding each group with a branch kept the compiler from interleaving
// the groups' dependent chains, and cost a convergence barrier per group.
__device__ __forceinline__ int round_group(int g0, int u, int g_end) {
  const int g = g0 + 32 * u;
  return g < g_end ? g : g_end - 1;
}

template <int kFormat, int R, int kU, bool kShared>
__device__ __forceinline__ void load_round(const LlmGpuMatrix& m, int r0, int groups, int g0, int g_end,
                                           Loaded (&l)[R][kU]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const uint32_t row = (uint32_t)(r0 + r) * (uint32_t)groups;
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      l[r][u] = load_group<kShared>(m, row + (uint32_t)round_group(g0, u, g_end), kFormat);
    }
  }
}

template <int kFormat, int R, int kU>
__device__ __forceinline__ void dot_round(const Loaded (&l)[R][kU], const ActView& a, int g0, int g_end, float* acc) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const float d = group_dot<kFormat>(l[r][u], a, round_group(g0, u, g_end));
      acc[r] = g0 + 32 * u < g_end ? acc[r] + d : acc[r];
    }
  }
}

// A warp's place in a pipelined product (rows_loop_pipelined, llm_matvec.cu;
// gate_up_rows, llm_swiglu_cluster.cu) is round `round` of matrix `mat` (of
// kMats: gate, then up) of task `task`; this moves it to the next. Each place
// follows from the one before by counting rather than from a step index,
// which took three integer divisions by run-time counts a step and one more a
// task: decode is faster without them (docs/perf-notes.md).
template <int kMats>
__device__ __forceinline__ void pipe_advance(int& task, int& mat, int& round, int rounds, int task_stride) {
  if (++round == rounds) {
    round = 0;
    if (++mat == kMats) {
      mat = 0;
      task += task_stride;
    }
  }
}

// Rows r0 .. r0 + R - 1 of a quantized matrix over groups [g_begin, g_end):
// this lane's partial sums.
template <int kFormat, int R, bool kShared>
__device__ void rows_quant(const LlmGpuMatrix& m, int r0, const ActView& a, int g_begin, int g_end, float* acc) {
  constexpr int kU = mv_per_row(kShared ? MV_IN_FLIGHT_SHARED : MV_IN_FLIGHT, R);  // groups per row per round
  const int groups = m.cols / LLM_GROUP;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  // (The loop's bound is the warp's, so that its lanes never part.)
  for (int base = g_begin; base < g_end; base += 32 * kU) {
    Loaded l[R][kU];
    load_round<kFormat, R, kU, kShared>(m, r0, groups, base + lane, g_end, l);
    dot_round<kFormat, R, kU>(l, a, base + lane, g_end, acc);
  }
}

__device__ __forceinline__ void unpack_half8(uint4 w, bool bf16, float* f) {
  const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint16_t lo = (uint16_t)(u[i] & 0xffffu), hi = (uint16_t)(u[i] >> 16);
    f[2 * i] = bf16 ? bf16_to_float(lo) : half_to_float(lo);
    f[2 * i + 1] = bf16 ? bf16_to_float(hi) : half_to_float(hi);
  }
}

// F16/BF16/F32 rows: a round of R rows, kU 16-byte units of each per lane from
// column c0 (a lane's first), clamped to the range's last unit (c_end: the
// range's end in columns); loaded, then multiplied with the activations.
template <int kAct>
__device__ __forceinline__ constexpr int plain_per16() {
  return kAct == kActF32 ? 4 : 8;  // values per 16 bytes
}
template <int kAct, int R, int kU, bool kShared>
__device__ __forceinline__ void load_plain_round(const LlmGpuMatrix& m, int r0, int c0, int c_end, uint4 (&w)[R][kU]) {
  constexpr int kPer = plain_per16<kAct>();
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int c = min(c0 + 32 * kPer * u, c_end - kPer);
      w[r][u] = mv_load16<kShared>((const uint8_t*)m.qs + ((size_t)(r0 + r) * m.cols + c) * (16 / kPer));
    }
  }
}
template <int kAct, int R, int kU>
__device__ __forceinline__ void dot_plain_round(const uint4 (&w)[R][kU], const ActView& a, int c0, int c_end,
                                                float* acc) {
  constexpr int kPer = plain_per16<kAct>();
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const bool here = c0 + 32 * kPer * u < c_end;
    const int c = min(c0 + 32 * kPer * u, c_end - kPer);
    float x[8];
    if (kAct == kActF32) {
      const uint4 v = act_load16(a.f + c);
      x[0] = __uint_as_float(v.x); x[1] = __uint_as_float(v.y);
      x[2] = __uint_as_float(v.z); x[3] = __uint_as_float(v.w);
    } else {
      unpack_half8(act_load16(a.h + c), kAct == kActBF16, x);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float t = acc[r];
      if (kAct == kActF32) {
        t += __uint_as_float(w[r][u].x) * x[0] + __uint_as_float(w[r][u].y) * x[1] +
             __uint_as_float(w[r][u].z) * x[2] + __uint_as_float(w[r][u].w) * x[3];
      } else {
        float wf[8];
        unpack_half8(w[r][u], kAct == kActBF16, wf);
#pragma unroll
        for (int i = 0; i < 8; ++i) t += wf[i] * x[i];
      }
      acc[r] = here ? t : acc[r];
    }
  }
}

// F16/BF16/F32 rows over 16-byte units [u_begin, u_end): lane l takes unit
// u_begin + l of each 32.
template <int kAct, int R, bool kShared>
__device__ void rows_plain(const LlmGpuMatrix& m, int r0, const ActView& a, int u_begin, int u_end, float* acc) {
  constexpr int kU = mv_per_row(kShared ? MV_IN_FLIGHT_SHARED : MV_IN_FLIGHT_PLAIN, R);
  constexpr int kPer = plain_per16<kAct>();
  const int lane = threadIdx.x & 31;
  const int c_end = u_end * kPer;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  // Straight rounds as in the quantized loops: past the end a lane takes the
  // range's last unit again and drops the product. (Clamped in columns, not
  // through round_group on units: that form, the same indices, decoded 1B F16
  // 11% slower on the H200.)
  for (int base = u_begin * kPer; base < c_end; base += 32 * kPer * kU) {
    uint4 w[R][kU];
    load_plain_round<kAct, R, kU, kShared>(m, r0, base + lane * kPer, c_end, w);
    dot_plain_round<kAct, R, kU>(w, a, base + lane * kPer, c_end, acc);
  }
}

// Units of a row the loops above walk: quantized groups, or 16-byte units.
__device__ __forceinline__ int row_units(const LlmGpuMatrix& m, int act) {
  return act == kActQ8x32 || act == kActQ8K ? m.cols / LLM_GROUP : m.cols / (act == kActF32 ? 4 : 8);
}

// Which products a build of the matrix-vector kernels holds: those of one
// activation kind (kActOnly, -1 any), weight format (kFormatOnly, llm_formats.cuh's
// kGpu value, 0 any) and rows a warp (kRowsOnly, 0 any); the others trap.
// LlmKernels::matvec loads a decode product's kernels from a build of its kind,
// format and row count (llm_matvec.cu's MV_ACT, MV_FORMAT, MV_ROWS): a kernel
// that holds every format and row count is 100-380 KB of code, of which a
// launch runs a few. On the H200 the builds of one format and row count
// decoded 1B Q6_K 1.4% and 8B Q6_K 1.2% faster, and were as fast as or faster
// than builds of one format or one row count only (docs/perf-notes.md).
template <int kActOnly = -1, int kFormatOnly = 0, int kRowsOnly = 0>
struct MvBuild {
  // The build for jobs of Q4_K and Q6_K rows (kMvBuildQ4KQ6K).
  static __device__ constexpr bool q4k_q6k() { return kFormatOnly == kMvBuildQ4KQ6K; }
  template <int kAct>
  static __device__ constexpr bool holds_act() {
    return (kActOnly < 0 || kActOnly == kAct) &&
           (kFormatOnly == 0 || (q4k_q6k() ? kAct == kActQ8K : llm_act_kind(kFormatOnly) == kAct));
  }
  template <int kFormat>
  static __device__ constexpr bool holds_format() {
    return kFormatOnly == 0 || kFormatOnly == kFormat || (q4k_q6k() && (kFormat == kGpuQ4_K || kFormat == kGpuQ6_K));
  }
  template <int R>
  static __device__ constexpr bool holds_rows() {
    return kRowsOnly == 0 || kRowsOnly == R;
  }
};

// rows_quant where build B holds format kFormat, else a trap (the plan
// launches the build that holds it).
template <int kFormat, int R, bool kShared, class B>
__device__ __forceinline__ void rows_quant_held(const LlmGpuMatrix& m, int r0, const ActView& a, int begin, int end,
                                                float* y) {
  if constexpr (B::template holds_format<kFormat>()) {
    rows_quant<kFormat, R, kShared>(m, r0, a, begin, end, y);
  } else {
    __trap();
  }
}

// The R rows' products over units [begin, end), summed over the warp: in every
// lane (B: the build, MvBuild).
template <int kAct, int R, bool kShared, class B = MvBuild<>>
__device__ void rows_dot(const LlmGpuMatrix& m, int r0, const ActView& a, int begin, int end, float* y) {
  if (kAct == kActQ8x32) {
    switch (m.format) {
      case kGpuQ4_0: rows_quant_held<kGpuQ4_0, R, kShared, B>(m, r0, a, begin, end, y); break;
      case kGpuQ4_1: rows_quant_held<kGpuQ4_1, R, kShared, B>(m, r0, a, begin, end, y); break;
      case kGpuQ5_0: rows_quant_held<kGpuQ5_0, R, kShared, B>(m, r0, a, begin, end, y); break;
      case kGpuQ5_1: rows_quant_held<kGpuQ5_1, R, kShared, B>(m, r0, a, begin, end, y); break;
      default: rows_quant_held<kGpuQ8_0, R, kShared, B>(m, r0, a, begin, end, y); break;
    }
  } else if (kAct == kActQ8K) {
    switch (m.format) {
      case kGpuQ4_K: rows_quant_held<kGpuQ4_K, R, kShared, B>(m, r0, a, begin, end, y); break;
      case kGpuQ5_K: rows_quant_held<kGpuQ5_K, R, kShared, B>(m, r0, a, begin, end, y); break;
      default: rows_quant_held<kGpuQ6_K, R, kShared, B>(m, r0, a, begin, end, y); break;
    }
  } else {
    rows_plain<kAct, R, kShared>(m, r0, a, begin, end, y);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) y[r] = warp_sum(y[r]);
}

// A logit and its row as one integer whose maximum is the argmax (the first
// row among equal logits).
__device__ __forceinline__ unsigned long long argmax_key(float v, int row) {
  const uint32_t u = __float_as_uint(v);
  const uint32_t ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((unsigned long long)ordered << 32) | (unsigned long long)(0xffffffffu - (uint32_t)row);
}
