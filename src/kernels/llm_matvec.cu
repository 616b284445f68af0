// Matrix-vector products of LLM decode, one launch each: one token's
// activations against the repacked weight matrices (llm_formats.cuh), streaming
// the weights once. Every block first builds the (normalized, quantized)
// activation vector in shared memory (llm_act_prep.cuh; in the quantized add
// kernels the two blocks of a thread-block cluster prepare it together) while
// the L2 fetches its first rows; then each warp takes rows_per_warp rows at a time
// (llm_matvec_rows.cuh). The persistent decode step (llm_decode_step.cu) runs
// the same loops on rows staged in shared memory.
//
// Kernels are named matvec_<activation>_<epilogue>[_handoff][_early]:
//   activation  q8x32 | q8k | f16 | bf16 | f32 (what the weight formats pair with)
//   epilogue    store (y + bias) | add (out += y) | swiglu (silu(gate) * up) |
//               logits (store y, track the argmax in the step state)
//   _handoff    add: the input was handed over quantized, and is copied;
//               swiglu: the output is handed over quantized (llm_handoff.cuh)
//   _early      the warps' first weight loads issued before the wait and the
//               preparation (matvec_early, below)
// A store kernel tags its outputs for the attention where its job says so
// (LLM_HANDOFF_TAGGED, llm_tagged.cuh; in a self-ordered step only).
#include "gemm_prims.cuh"  // dynamic_smem
#include "llm_bulk.cuh"
#include "llm_chain.cuh"
#include "llm_handoff.cuh"
#include "llm_jobs.cuh"
#include "llm_matvec_rows.cuh"
#include "llm_tagged.cuh"

#define MV_THREADS 256
#define MV_WARPS (MV_THREADS / 32)
// Blocks an SM holds at once (the register budget follows: 2 -> 128 per thread).
#ifndef MV_MIN_BLOCKS
#define MV_MIN_BLOCKS 2
#endif
// Thread-block clusters (sm_90): the kernels of the quantized activation kinds
// run in clusters of MV_CLUSTER blocks, and those of the add epilogue (Wo and
// down: no norm, and down's input the widest) prepare their input together
// (llm_cluster.cuh). Measured on the H200 (docs/perf-notes.md): preparing
// together in every kernel lost 2-5% (the cluster's barriers cost more than
// the halved preparation saved); in the add kernels only, 1-2% faster decode
// of quantized models, but 2% slower F16 (whose preparation is a copy). The
// cluster launch alone was even, 0.3% slower for F16: the 16-bit and f32
// kernels run without clusters. MV_CLUSTER=1 turns clusters off.
#ifndef MV_CLUSTER
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MV_CLUSTER 2
#else
#define MV_CLUSTER 1
#endif
#endif
#if MV_CLUSTER > 1
#define MV_QUANT_CLUSTER_DIMS __cluster_dims__(MV_CLUSTER, 1, 1)
#else
#define MV_QUANT_CLUSTER_DIMS
#endif
// Whether the early gate/up kernels with several rows a warp load two rounds
// before the wait in a self-ordered step (rows_loop_pipelined; 0 for
// measurements).
#ifndef MV_PIPE_TWO_EARLY
#define MV_PIPE_TWO_EARLY 1
#endif
// Whether the early 16-bit gate/up kernels with several rows a warp load their
// first up round before the wait as well as their first gate round
// (early_swiglu_rows; 0 for measurements).
#ifndef MV_PLAIN_UP_EARLY
#define MV_PLAIN_UP_EARLY 1
#endif

// How the early 16-bit gate/up kernels load their first gate and up rounds
// before the wait: 0 into registers (early_swiglu_rows); copied into shared
// memory by the TMA (staged_swiglu_rows), 1 both before the wait, 2 the up
// rows' once the preparation's input loads are out. On the H200 1B F16
// decoded 0.4% faster with 1 and 2.0% with 2 than with 0 (docs/perf-notes.md).
#ifndef MV_PLAIN_STAGE
#define MV_PLAIN_STAGE 2
#endif

// Kernels of a hand-off (llm_handoff.cuh) are the add and swiglu kernels with
// this bit in their epilogue: an add kernel whose input was handed over (it
// copies instead of preparing) and a swiglu kernel that hands its output over.
// The other kernels carry none of their code (code a hot kernel carries but
// does not run costs it: with the hand-off a run-time switch, decode without it
// was 1.6-2.4% slower on the H200, docs/perf-notes.md).
#define MV_HANDOFF 4
#define MV_EPI(epi) ((epi) & ~MV_HANDOFF)

// The blocks that prepare a kernel's input together (1: each block alone).
template <int kAct, int kEpi>
__device__ constexpr int mv_share() {
  return MV_EPI(kEpi) == LLM_EPI_ADD && (kAct == kActQ8K || kAct == kActQ8x32) ? MV_CLUSTER : 1;
}

// The tag of a store kernel's outputs where it tags them (llm_tagged.cuh):
// thread 0 has the step's chain_base from the wait (mv_wait), and the block's
// barrier after its preparation shows the tag to every thread. A run-time
// choice, not kernels of their own: with store_handoff kernels added to the
// builds, and nothing tagged, 1B Q6_K and F16 decoded 0.7-0.9% slower on the
// H200 (docs/perf-notes.md).
__shared__ uint32_t mv_out_tag;

// Every thread of the block: the wait for the launches ahead (llm_chain.cuh).
template <int kEpi>
__device__ __forceinline__ void mv_wait(const LlmMatvecJob& job, const LlmStepState* state) {
  const uint32_t base = chain_wait(job.chain, state);
  if (MV_EPI(kEpi) == LLM_EPI_STORE && job.out_handoff == LLM_HANDOFF_TAGGED && threadIdx.x == 0) {
    mv_out_tag = base + (uint32_t)job.out_tag;
  }
}

// A block's activations: prepared from the input (llm_act_prep.cuh), or, in
// the add_handoff kernels, whose input was handed over quantized, copied
// (llm_handoff.cuh) by each block alone: a copy has no arithmetic to share
// (the cluster's blocks copying it together made 1B Q4_0 decode 1.3% slower
// on the H200, docs/perf-notes.md).
template <int kAct, int kEpi, class Share, class Hook = NoPrepHook>
__device__ __forceinline__ ActView mv_prepare(const LlmMatvecJob& job, uint8_t* smem, double* red,
                                              const Hook& hook = Hook{}) {
  if constexpr (MV_EPI(kEpi) == LLM_EPI_ADD && (kEpi & MV_HANDOFF) != 0) {
    hook();
    return copy_handoff<MV_THREADS, ActShare<1>, kAct>((const uint8_t*)job.in, job.cols, smem);
  }
  // An add product's input, the attention's output or gate/up's, has no norm,
  // and its kernels carry none of the normalizing code: with it, not run, 8B
  // Q4_K_M and 1B F16 decoded 0.6-0.7% slower on the H200 (docs/llm-gpu.md).
  constexpr bool kMayNorm = MV_EPI(kEpi) != LLM_EPI_ADD;
  return prepare_activations<kAct, MV_THREADS, CtaSync, Share, Hook, kMayNorm>(
      (const float*)job.in, (const float*)job.norm, job.eps, job.cols, smem, red, hook);
}

// The cluster of a kernel of activation kind kAct, as an ActShare.
template <int kAct>
using MvCluster = ActShare<(kAct == kActQ8K || kAct == kActQ8x32) ? MV_CLUSTER : 1>;

// The segment holding `row` of the concatenated rows: its index, and the row
// within it.
__device__ __forceinline__ int segment_of(const LlmMatvecJob& job, int row, int* r) {
  *r = row;
  if (job.segments > 1 && *r >= job.m[0].rows) {
    *r -= job.m[0].rows;
    if (job.segments > 2 && *r >= job.m[1].rows) {
      *r -= job.m[1].rows;
      return 2;
    }
    return 1;
  }
  return 0;
}

__device__ __forceinline__ LlmGpuMatrix segment_matrix(const LlmMatvecJob& job, int seg) {
  return seg == 0 ? job.m[0] : seg == 1 ? job.m[1] : job.m[2];
}

// The add epilogue's residual value of row row0 + lane (lane < R; 0 elsewhere
// and for other epilogues), loaded when a warp starts the rows rather than
// when it has their sums: the launches ahead wrote it, and the load's round
// trip then overlaps the products instead of following them.
template <int kEpi, int R>
__device__ __forceinline__ float residual_of(const LlmMatvecJob& job, int row0) {
  const int lane = threadIdx.x & 31;
  if (MV_EPI(kEpi) != LLM_EPI_ADD || lane >= R) return 0.0f;
  return ((const float*)job.out)[row0 + lane];
}

// The epilogue of R rows from row0 (lane i < R stores row row0 + i). `y` and,
// for swiglu, `u` (the up rows) are warp sums, in every lane; `residual` is
// residual_of(row0) (add).
template <int kEpi, int R>
__device__ __forceinline__ void finish_rows(const LlmMatvecJob& job, int row0, const float* y, const float* u,
                                            float residual, unsigned long long* best) {
  const int lane = threadIdx.x & 31;
  if (lane >= R) return;
  float* out = (float*)job.out;
  float v = y[0];
#pragma unroll
  for (int i = 1; i < R; ++i) v = lane == i ? y[i] : v;
  const int row = row0 + lane;
  if (MV_EPI(kEpi) == LLM_EPI_SWIGLU) {
    float w = u[0];
#pragma unroll
    for (int i = 1; i < R; ++i) w = lane == i ? u[i] : w;
    if constexpr ((kEpi & MV_HANDOFF) != 0) {
      swiglu_stage_of<MV_WARPS, R>(job, row0)[lane] = llm_silu_times(v, w);
    } else {
      out[row] = llm_silu_times(v, w);
    }
  } else if (MV_EPI(kEpi) == LLM_EPI_STORE) {
    int r;
    const int seg = segment_of(job, row, &r);
    const float* bias = (const float*)(seg == 0 ? job.bias[0] : seg == 1 ? job.bias[1] : job.bias[2]);
    const float value = bias ? v + bias[r] : v;
    if (job.out_handoff != LLM_HANDOFF_TAGGED) {
      out[row] = value;
    } else {
      store_tagged((uint64_t*)job.out + row, value, mv_out_tag);
    }
  } else if (MV_EPI(kEpi) == LLM_EPI_ADD) {
    out[row] = residual + v;
  } else {
    out[row] = v;
    const unsigned long long k = argmax_key(v, row);
    *best = k > *best ? k : *best;
  }
}

template <int kAct, int kEpi, int R, class B>
__device__ __forceinline__ void rows_loop(const LlmMatvecJob& job, const ActView& a, unsigned long long* best) {
  const int warp = threadIdx.x >> 5;
  const int tasks = job.rows / R;
  for (int task = blockIdx.x * MV_WARPS + warp; task < tasks; task += gridDim.x * MV_WARPS) {
    const int row0 = task * R;
    const float residual = residual_of<kEpi, R>(job, row0);
    float y[R], u[R];
    if (MV_EPI(kEpi) == LLM_EPI_SWIGLU) {
      rows_dot<kAct, R, false, B>(job.m[0], row0, a, 0, row_units(job.m[0], kAct), y);
      rows_dot<kAct, R, false, B>(job.m[1], row0, a, 0, row_units(job.m[1], kAct), u);
    } else {
      int r;
      const LlmGpuMatrix m = segment_matrix(job, segment_of(job, row0, &r));
      rows_dot<kAct, R, false, B>(m, r, a, 0, row_units(m, kAct), y);
    }
    finish_rows<kEpi, R>(job, row0, y, u, residual, best);
  }
}

// What a block of an early-loading product (matvec_early) does once its warps'
// first weight loads are out: wait for the launches ahead, then prepare the
// activations. NoEarlyPrep: the block has done both before its rows.
struct NoEarlyPrep {
  enum { kEarly = 0 };  // (enumerators: see llm_gemm_wgmma.cu on static constexpr members)
  __device__ __forceinline__ ActView prepare(const LlmMatvecJob&) const { return ActView{}; }
};
template <int kAct, int kShare, int kEpi>
struct EarlyPrep {
  enum { kEarly = 1 };
  uint8_t* smem;
  double* red;
  // (hook: what the block does once the preparation's input loads are out.)
  template <class Hook = NoPrepHook>
  __device__ __forceinline__ ActView prepare(const LlmMatvecJob& job, const Hook& hook = Hook{}) const {
    LlmStepState* state = (LlmStepState*)job.state;
    mv_wait<kEpi>(job, state);
    const ActView a = mv_prepare<kAct, kEpi, ActShare<kShare>>(job, smem, red, hook);
    __syncthreads();
    chain_stamp(job.chain, state, LLM_STAMP_PREPARED);
    return a;
  }
};

// A warp's products of one quantized format as one pipeline of rounds (R rows,
// kU groups per lane each): the loads of the next round -- further along these
// rows, the up rows after the gate rows, or the warp's next task -- are issued
// before the products of this one, so a lane has loads in flight while it
// computes. rows_loop waits for each round, then computes with nothing in
// flight: on 8B Q4_K_M's gate/up, a third of the time went to products no
// load overlapped (docs/perf-notes.md). The format is a template argument so
// the two rounds in registers hold only what that format loads (a run-time
// format made every group the size of the largest, and the kernel spilled).
//
// With an EarlyPrep (matvec_early) the warp's first round (its first two, with
// several rows a warp in a self-ordered step) is loaded before the block waits
// for the launches ahead and prepares its activations (`a` is then the
// preparation's).
template <int kFormat, int kEpi, int R, class Prep = NoEarlyPrep>
__device__ __forceinline__ void rows_loop_pipelined(const LlmMatvecJob& job, ActView a, unsigned long long* best,
                                                    const Prep& early = Prep{}) {
  constexpr bool kEarly = Prep::kEarly != 0;
  constexpr int kU = mv_per_row(MV_PIPE_IN_FLIGHT, R);
  constexpr int kMats = MV_EPI(kEpi) == LLM_EPI_SWIGLU ? 2 : 1;
  const int lane = threadIdx.x & 31;
  const int first = blockIdx.x * MV_WARPS + (threadIdx.x >> 5), stride = gridDim.x * MV_WARPS;
  const int tasks = job.rows / R;
  const bool has = first < tasks;
  if (!kEarly && !has) return;
  const int groups = job.cols / LLM_GROUP;
  const int rounds = (groups + 32 * kU - 1) / (32 * kU);
  const int per_task = kMats * rounds;
  const int steps = has ? ((tasks - 1 - first) / stride + 1) * per_task : 0;

  // A step is one round of one matrix (gate, then up) of one of the warp's
  // tasks (pipe_advance): its matrix (segment), first row there, and first
  // group.
  struct Step {
    LlmGpuMatrix m;
    int r, g0, task, mat, round, last;
  };
  auto with_rows = [&](Step st) {
    st.last = st.mat == kMats - 1 && st.round == rounds - 1;
    st.r = st.task * R;
    st.m = kMats == 2 ? job.m[st.mat] : segment_matrix(job, segment_of(job, st.r, &st.r));
    st.g0 = st.round * 32 * kU + lane;
    return st;
  };
  auto step_after = [&](const Step& p) {
    Step st = p;
    pipe_advance<kMats>(st.task, st.mat, st.round, rounds, stride);
    return with_rows(st);
  };
  float y[R], u[R];
#pragma unroll
  for (int r = 0; r < R; ++r) y[r] = u[r] = 0.0f;
  float residual = kEarly ? 0.0f : residual_of<kEpi, R>(job, first * R);
  Loaded cur[R][kU];
  Step start{};
  start.task = first;
  Step now = with_rows(start);
  if (has) load_round<kFormat, R, kU, false>(now.m, now.r, groups, now.g0, groups, cur);
  // With several rows a warp, a round is one or two groups a row, a small part
  // of a task: in a self-ordered step, whose early loads overlap the launch
  // ahead, the second round is loaded before the wait as well, and the first
  // step issues nothing. On the H200 1B Q6_K decoded 1.8% faster so; one row
  // a warp (8B's gate/up, whose round is half a task) was 1.1% slower, Q8_0
  // (the largest groups: the kernel spilled) 7% slower, and in stream order
  // (cuda), where the loads overlap the preparation only, 1B Q6_K lost 3.6%
  // (docs/perf-notes.md).
  constexpr bool kTwoEarly = kEarly && R > 1 && kFormat != kGpuQ8_0 && MV_PIPE_TWO_EARLY;
  Loaded pre[R][kU];
  Step pre_step = now;
  const bool two = kTwoEarly && steps > 1 && job.chain.chained != 0;
  if (two) {
    pre_step = step_after(now);
    load_round<kFormat, R, kU, false>(pre_step.m, pre_step.r, groups, pre_step.g0, groups, pre);
  }
  if (kEarly) {
    a = early.prepare(job);
    if (!has) return;
    residual = residual_of<kEpi, R>(job, first * R);
  }
  for (int s = 0; s < steps; ++s) {
    Loaded next[R][kU];
    Step then = now;
    if (s + 1 < steps) {
      if (two && s == 0) {
        then = pre_step;
#pragma unroll
        for (int r = 0; r < R; ++r) {
#pragma unroll
          for (int k = 0; k < kU; ++k) next[r][k] = pre[r][k];
        }
      } else {
        then = step_after(now);
        load_round<kFormat, R, kU, false>(then.m, then.r, groups, then.g0, groups, next);
      }
    }
    // Into y or u directly, group after group as in rows_quant: every row's
    // sum keeps its order, so both loops give the same bits.
    if (kMats == 2 && now.mat == 1) {
      dot_round<kFormat, R, kU>(cur, a, now.g0, groups, u);
    } else {
      dot_round<kFormat, R, kU>(cur, a, now.g0, groups, y);
    }
    if (now.last) {  // the task's rows are done
#pragma unroll
      for (int r = 0; r < R; ++r) {
        y[r] = warp_sum(y[r]);
        if (kMats == 2) u[r] = warp_sum(u[r]);
      }
      finish_rows<kEpi, R>(job, now.task * R, y, u, residual, best);
#pragma unroll
      for (int r = 0; r < R; ++r) y[r] = u[r] = 0.0f;
      if (s + 1 < steps) residual = residual_of<kEpi, R>(job, then.task * R);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int k = 0; k < kU; ++k) cur[r][k] = next[r][k];
    }
    now = then;
  }
}

// The one weight format of every matrix of the job (gate and up for swiglu,
// every segment otherwise), or 0 where they differ.
template <int kEpi>
__device__ __forceinline__ int job_format(const LlmMatvecJob& job) {
  const int f = job.m[0].format;
  const int n = MV_EPI(kEpi) == LLM_EPI_SWIGLU ? 2 : job.segments;
  for (int s = 1; s < n; ++s) {
    if (segment_matrix(job, s).format != f) return 0;
  }
  return f;
}

// Whether MV_PIPELINE pipelines any product of this kernel
// (llm_matvec_tuning.cuh).
template <int kAct, int kEpi>
__device__ __forceinline__ bool mv_pipelined() {
  const bool swiglu = MV_EPI(kEpi) == LLM_EPI_SWIGLU;
  if (kAct == kActQ8K) return llm_mv_pipe_bit(true, swiglu);
  return kAct == kActQ8x32 && llm_mv_pipe_bit(false, swiglu);
}

// Cases of a switch on a product's one weight format (job_format): each runs
// its statement with kFormat the format, and compiles only in the kernels of
// the activation kind the format pairs with and in builds that hold the
// format (B, MvBuild). MV_PIPELINED_FORMATS lists
// llm_mv_pipelined's formats (the host plan reads that), MV_EARLY_QUANT_FORMATS
// the store and add formats of llm_mv_early.
#define MV_FORMAT_CASE(format, act, ...)                               \
  case format:                                                         \
    if constexpr (kAct == act && B::template holds_format<format>()) { \
      constexpr int kFormat = format;                                  \
      __VA_ARGS__;                                                     \
    }                                                                  \
    break;
#define MV_PIPELINED_FORMATS(...)                  \
  MV_FORMAT_CASE(kGpuQ4_K, kActQ8K, __VA_ARGS__)   \
  MV_FORMAT_CASE(kGpuQ5_K, kActQ8K, __VA_ARGS__)   \
  MV_FORMAT_CASE(kGpuQ6_K, kActQ8K, __VA_ARGS__)   \
  MV_FORMAT_CASE(kGpuQ4_0, kActQ8x32, __VA_ARGS__) \
  MV_FORMAT_CASE(kGpuQ4_1, kActQ8x32, __VA_ARGS__) \
  MV_FORMAT_CASE(kGpuQ8_0, kActQ8x32, __VA_ARGS__)
#define MV_EARLY_QUANT_FORMATS(...)                \
  MV_FORMAT_CASE(kGpuQ4_K, kActQ8K, __VA_ARGS__)   \
  MV_FORMAT_CASE(kGpuQ6_K, kActQ8K, __VA_ARGS__)   \
  MV_FORMAT_CASE(kGpuQ4_0, kActQ8x32, __VA_ARGS__) \
  MV_FORMAT_CASE(kGpuQ8_0, kActQ8x32, __VA_ARGS__)

// A case of a switch on rows_per_warp: its statement where the build (B)
// holds r rows a warp, a trap in the others (the plan launches the build that
// holds the job's rows).
#define MV_ROWS_CASE(r, ...)                     \
  case r:                                        \
    if constexpr (B::template holds_rows<r>()) { \
      __VA_ARGS__;                               \
    } else {                                     \
      __trap();                                  \
    }                                            \
    break;

template <int kAct, int kEpi, int R, class B>
__device__ __forceinline__ void warp_rows(const LlmMatvecJob& job, const ActView& a, unsigned long long* best) {
  if (mv_pipelined<kAct, kEpi>()) {
    switch (job_format<kEpi>(job)) {
      MV_PIPELINED_FORMATS(return rows_loop_pipelined<kFormat, kEpi, R>(job, a, best))
      default: break;  // matrices of different formats, Q5_0, Q5_1
    }
  }
  rows_loop<kAct, kEpi, R, B>(job, a, best);
}

// The block's largest logit key into the step state (logits epilogue).
__device__ __forceinline__ void block_argmax(const LlmMatvecJob& job, unsigned long long best,
                                             unsigned long long* block_best) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, best, o);
    best = other > best ? other : best;
  }
  if (lane == 0) block_best[warp] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long b = 0;
    for (int w = 0; w < MV_WARPS; ++w) b = block_best[w] > b ? block_best[w] : b;
    atomicMax(&((LlmStepState*)job.state)->argmax, b);
  }
}

template <int kAct, int kEpi, class B = MvBuild<>>
__device__ __forceinline__ void matvec(const LlmMatvecJob& job) {
  uint8_t* smem = dynamic_smem();
  __shared__ double red[MV_WARPS];
  __shared__ unsigned long long block_best[MV_WARPS];
  const int warp = threadIdx.x >> 5;
  const int R = job.rows_per_warp;

  // The first rows of this warp start on their way to L2 before the prep --
  // in a self-ordered step before the wait, while the launch ahead drains
  // (the larger part of what chaining gains, docs/perf-notes.md).
  {
    const int row0 = (blockIdx.x * MV_WARPS + warp) * R;
    if (row0 < job.rows) {
      if (MV_EPI(kEpi) == LLM_EPI_SWIGLU) {
        prefetch_rows(job.m[0], row0, R);
        prefetch_rows(job.m[1], row0, R);
      } else {
        int r;
        prefetch_rows(segment_matrix(job, segment_of(job, row0, &r)), r, R);
      }
    }
  }
  LlmStepState* state = (LlmStepState*)job.state;
  mv_wait<kEpi>(job, state);
  const ActView a = mv_prepare<kAct, kEpi, ActShare<mv_share<kAct, kEpi>()>>(job, smem, red);
  __syncthreads();
  chain_stamp(job.chain, state, LLM_STAMP_PREPARED);

  unsigned long long best = 0;
  switch (R) {
    MV_ROWS_CASE(4, warp_rows<kAct, kEpi, 4, B>(job, a, &best))
    MV_ROWS_CASE(2, warp_rows<kAct, kEpi, 2, B>(job, a, &best))
    MV_ROWS_CASE(1, warp_rows<kAct, kEpi, 1, B>(job, a, &best))
    default: __trap();
  }
  if (MV_EPI(kEpi) == LLM_EPI_LOGITS) block_argmax(job, best, block_best);
  if constexpr (kEpi == (LLM_EPI_SWIGLU | MV_HANDOFF)) handoff_swiglu<MV_WARPS, MvCluster<kAct>>(job);
  chain_signal(job.chain, state);
}

// Early-loading products: a warp's first weight loads go out before its block
// waits for the launches ahead and prepares the activations. The weights do
// not depend on those launches, so a warp's first round is on its way (in its
// registers, not only asked of L2 as the first-row prefetch does) while the
// launch ahead drains; a short product's whole rows are often one round. The
// format and rows per warp are template arguments: the round lives across the
// wait and the preparation, and a run-time format would hold the largest
// format's fields. Separate kernels (matvec_<act>_<epi>_early), which the plan
// launches in a decode step for one-format products of the formats below
// (llm_mv_early, GpuLlamaOptions::early_loads): code a hot kernel carries for a
// path it does not take costs it (docs/perf-notes.md). Every row's sums are
// rows_quant's and rows_plain's, in their order.

// A round of R rows of one format, kU groups a lane (rows_quant's rounds), in
// units of groups.
template <int kFormat, int R>
struct QuantRound {
  enum { kU = mv_per_row(MV_IN_FLIGHT, R), kStep = 32 * kU };
  Loaded l[R][kU];
  // Whether m's rows are this round's format (a job of two, early_rows).
  static __device__ __forceinline__ bool takes(const LlmGpuMatrix& m) { return m.format == kFormat; }
  static __device__ __forceinline__ int units(const LlmMatvecJob& job) { return job.cols / LLM_GROUP; }
  __device__ __forceinline__ void load(const LlmGpuMatrix& m, int r0, int base, int end) {
    load_round<kFormat, R, kU, false>(m, r0, end, base + (threadIdx.x & 31), end, l);
  }
  __device__ __forceinline__ void dot(const ActView& a, int base, int end, float* acc) const {
    dot_round<kFormat, R, kU>(l, a, base + (threadIdx.x & 31), end, acc);
  }
};

// A round of R F16/BF16/F32 rows (rows_plain's rounds), in units of columns.
template <int kAct, int R>
struct PlainRound {
  enum { kU = mv_per_row(MV_IN_FLIGHT_PLAIN, R), kPer = plain_per16<kAct>(), kStep = 32 * kPer * kU };
  uint4 w[R][kU];
  static __device__ __forceinline__ bool takes(const LlmGpuMatrix&) { return true; }
  static __device__ __forceinline__ int units(const LlmMatvecJob& job) { return job.cols; }
  __device__ __forceinline__ void load(const LlmGpuMatrix& m, int r0, int base, int end) {
    load_plain_round<kAct, R, kU, false>(m, r0, base + (threadIdx.x & 31) * kPer, end, w);
  }
  __device__ __forceinline__ void dot(const ActView& a, int base, int end, float* acc) const {
    dot_plain_round<kAct, R, kU>(w, a, base + (threadIdx.x & 31) * kPer, end, acc);
  }

  // Staged rounds (staged_swiglu_rows): round 0 of row r0 + i in shared memory
  // at slot + i * kSlotBytes, as many of the row's first bytes as a round
  // reads (the whole row where it is shorter).
  enum { kSlotBytes = llm_mv_plain_round_bytes(R) };
  static_assert(kSlotBytes == 32 * 16 * kU, "a slot holds one round of a row");
  static __device__ __forceinline__ uint32_t slot_fill(int end) {
    const int row_bytes = end * (16 / kPer);
    return row_bytes < kSlotBytes ? row_bytes : kSlotBytes;
  }
  // (One thread: the copies of the R rows, counted on bar.)
  static __device__ __forceinline__ void stage(const LlmGpuMatrix& m, int r0, int end, uint8_t* slot, uint64_t* bar) {
    const uint32_t bytes = slot_fill(end);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      bulk_load(slot + i * kSlotBytes, (const uint8_t*)m.qs + (size_t)(r0 + i) * end * (16 / kPer), bytes, bar);
    }
  }
  // Round 0 from its staged copy, the units load() would take.
  __device__ __forceinline__ void from_stage(const uint8_t* slot, int end) {
    const int c0 = (threadIdx.x & 31) * kPer;
#pragma unroll
    for (int i = 0; i < R; ++i) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int c = min(c0 + 32 * kPer * u, end - kPer);
        w[i][u] = act_load16(slot + i * kSlotBytes + c * (16 / kPer));
      }
    }
  }
};

// A task's R rows (of matrix m from its row r) into y, summed over the warp;
// `round` holds their first round already when `loaded`.
template <int R, class Round>
__device__ __forceinline__ void early_task(const LlmGpuMatrix& m, int r, const ActView& a, int end, Round& round,
                                           bool loaded, float* y) {
#pragma unroll
  for (int i = 0; i < R; ++i) y[i] = 0.0f;
  int base = 0;
  if (loaded) {
    round.dot(a, 0, end, y);
    base = Round::kStep;
  }
  for (; base < end; base += Round::kStep) {
    Round more;
    more.load(m, r, base, end);
    more.dot(a, base, end, y);
  }
#pragma unroll
  for (int i = 0; i < R; ++i) y[i] = warp_sum(y[i]);
}

// Whether two round types are one (early_rows of a job of one format).
template <class A, class B>
struct SameRound {
  enum { value = 0 };
};
template <class A>
struct SameRound<A, A> {
  enum { value = 1 };
};

// A task's rows (early_task) where the job has rows of two formats: those of
// Round's format through `round` (holding their first round where `loaded`),
// the others through Other's rounds, loaded as they go.
template <int R, class Round, class Other>
__device__ __forceinline__ void early_task_of(const LlmGpuMatrix& m, int r, const ActView& a, int end, Round& round,
                                              bool loaded, float* y) {
  if (SameRound<Round, Other>::value || Round::takes(m)) {
    early_task<R>(m, r, a, end, round, loaded, y);
  } else {
    Other none;
    early_task<R>(m, r, a, end, none, false, y);
  }
}

// Rows of the store and add epilogues: the warp's first task's first round
// early, the rest of its rows and tasks after the preparation. A job of two
// formats (Other not Round: llm_mv_early_mixed) loads early the warps whose
// first rows are Round's format.
template <int kAct, int kEpi, int R, class Round, class Other = Round>
__device__ __forceinline__ void early_rows(const LlmMatvecJob& job,
                                           const EarlyPrep<kAct, mv_share<kAct, kEpi>(), kEpi>& early) {
  const int first = blockIdx.x * MV_WARPS + (threadIdx.x >> 5), stride = gridDim.x * MV_WARPS;
  const int tasks = job.rows / R;
  const int end = Round::units(job);
  const bool has = first < tasks;
  int r = 0;
  const LlmGpuMatrix m = segment_matrix(job, has ? segment_of(job, first * R, &r) : 0);
  Round round;
  const bool loaded = has && (SameRound<Round, Other>::value || Round::takes(m));
  if (loaded) round.load(m, r, 0, end);
  const ActView a = early.prepare(job);
  if (!has) return;
  float y[R];
  {
    const float residual = residual_of<kEpi, R>(job, first * R);
    early_task_of<R, Round, Other>(m, r, a, end, round, loaded, y);
    finish_rows<kEpi, R>(job, first * R, y, y, residual, nullptr);
  }
  for (int task = first + stride; task < tasks; task += stride) {
    const int row0 = task * R;
    const float residual = residual_of<kEpi, R>(job, row0);
    int tr;
    const LlmGpuMatrix tm = segment_matrix(job, segment_of(job, row0, &tr));
    early_task_of<R, Round, Other>(tm, tr, a, end, round, false, y);
    finish_rows<kEpi, R>(job, row0, y, y, residual, nullptr);
  }
}

// A 16-bit gate/up warp's tasks after its first (`first`, whose rounds went
// early): gate before up, each loaded round by round after the preparation.
template <int kEpi, int R, class Round>
__device__ __forceinline__ void swiglu_later_tasks(const LlmMatvecJob& job, const ActView& a, int end, int first,
                                                   int stride, int tasks) {
  Round none;  // (early_task's loaded round, unused: nothing is loaded)
  float y[R], u[R];
  for (int task = first + stride; task < tasks; task += stride) {
    const int row0 = task * R;
    early_task<R>(job.m[0], row0, a, end, none, false, y);
    early_task<R>(job.m[1], row0, a, end, none, false, u);
    finish_rows<kEpi, R>(job, row0, y, u, 0.0f, nullptr);
  }
}

// Rows of a 16-bit gate/up product with MV_PLAIN_STAGE 0: the warp's first
// task's first gate round early -- with several rows a warp its first up round
// too -- and the rest after the preparation, gate before up as in rows_loop
// (the same sums in its order). On the H200 these made 1B F16 (two rows a warp)
// decode 0.9-1.8% faster on nv and 1.7% on cuda; 8B F16 (one row a warp) was
// 1.3-1.5% slower with its up round early too, and even without
// (docs/perf-notes.md).
template <int kAct, int kEpi, int R, class Round>
__device__ __forceinline__ void early_swiglu_rows(const LlmMatvecJob& job,
                                                  const EarlyPrep<kAct, mv_share<kAct, kEpi>(), kEpi>& early) {
  constexpr bool kUpEarly = MV_PLAIN_UP_EARLY && R > 1;
  const int first = blockIdx.x * MV_WARPS + (threadIdx.x >> 5), stride = gridDim.x * MV_WARPS;
  const int tasks = job.rows / R;
  const int end = Round::units(job);
  const bool has = first < tasks;
  Round gate, up;
  if (has) {
    gate.load(job.m[0], first * R, 0, end);
    if (kUpEarly) up.load(job.m[1], first * R, 0, end);
  }
  const ActView a = early.prepare(job);
  if (!has) return;
  float y[R], u[R];
  early_task<R>(job.m[0], first * R, a, end, gate, true, y);
  early_task<R>(job.m[1], first * R, a, end, up, kUpEarly, u);
  finish_rows<kEpi, R>(job, first * R, y, u, 0.0f, nullptr);
  swiglu_later_tasks<kEpi, R, Round>(job, a, end, first, stride, tasks);
}

// A task's R rows whose round 0 is staged at `slot` (counted on bar, unless
// null: waited for already), summed over the warp into y. The next round's
// loads go out before the staged round is multiplied; the sums keep
// early_task's order.
template <int R, class Round>
__device__ __forceinline__ void staged_task(const LlmGpuMatrix& m, int r, const ActView& a, int end,
                                            const uint8_t* slot, uint64_t* bar, float* y) {
#pragma unroll
  for (int i = 0; i < R; ++i) y[i] = 0.0f;
  Round more;
  if (Round::kStep < end) more.load(m, r, Round::kStep, end);
  if (bar) mbarrier_wait(bar, 0);
  {
    Round staged;
    staged.from_stage(slot, end);
    staged.dot(a, 0, end, y);
  }
  for (int base = Round::kStep; base < end; base += Round::kStep) {
    if (base > Round::kStep) more.load(m, r, base, end);
    more.dot(a, base, end, y);
  }
#pragma unroll
  for (int i = 0; i < R; ++i) y[i] = warp_sum(y[i]);
}

// early_swiglu_rows with the warp's first gate and up rounds copied into shared
// memory by the TMA (from job.stage_at, a warp's 2 R slots after the warp
// before's: llm_mv_plain_stage_bytes) instead of loaded into registers. The
// gate rows' copies go out before the wait, the up rows' (MV_PLAIN_STAGE 2)
// once the preparation's input loads are out: the memory serves requests in
// about the order they come, and a block's input and the wait's polls queued
// behind all of a launch's first rounds, 17 MB on 1B F16's gate/up (the
// timeline put its blocks' release 4.4 us after the launch ahead had ended,
// the first rounds' stream took 3.8). Split so, the stream still covers the
// wait and the preparation, and the preparation does not wait for all of it.
template <int kAct, int kEpi, int R, class Round>
__device__ __forceinline__ void staged_swiglu_rows(const LlmMatvecJob& job,
                                                   const EarlyPrep<kAct, mv_share<kAct, kEpi>(), kEpi>& early) {
  __shared__ uint64_t staged[MV_WARPS];
  const int warp = threadIdx.x >> 5;
  const int first = blockIdx.x * MV_WARPS + warp, stride = gridDim.x * MV_WARPS;
  const int tasks = job.rows / R;
  const int end = Round::units(job);
  const bool has = first < tasks;
  uint8_t* slots = dynamic_smem() + job.stage_at + warp * 2 * R * Round::kSlotBytes;
  const bool copier = has && (threadIdx.x & 31) == 0;
  if (copier) {
    mbarrier_init(&staged[warp], 1);
    mbarrier_init_fence();
    mbarrier_expect_bytes(&staged[warp], 2 * R * Round::slot_fill(end));
    Round::stage(job.m[0], first * R, end, slots, &staged[warp]);
    if (MV_PLAIN_STAGE == 1) Round::stage(job.m[1], first * R, end, slots + R * Round::kSlotBytes, &staged[warp]);
  }
  // (MV_PLAIN_STAGE 2: the up rows' copies, from the preparation.)
  auto up_copies = [&] {
    if (MV_PLAIN_STAGE == 2 && copier) {
      Round::stage(job.m[1], first * R, end, slots + R * Round::kSlotBytes, &staged[warp]);
    }
  };
  const ActView a = early.prepare(job, up_copies);
  if (!has) return;
  float y[R], u[R];
  staged_task<R, Round>(job.m[0], first * R, a, end, slots, &staged[warp], y);
  staged_task<R, Round>(job.m[1], first * R, a, end, slots + R * Round::kSlotBytes, nullptr, u);
  finish_rows<kEpi, R>(job, first * R, y, u, 0.0f, nullptr);
  swiglu_later_tasks<kEpi, R, Round>(job, a, end, first, stride, tasks);
}

template <int kAct, int kEpi, int R, class B>
__device__ __forceinline__ void early_rows_of(const LlmMatvecJob& job,
                                              const EarlyPrep<kAct, mv_share<kAct, kEpi>(), kEpi>& early) {
  if (MV_EPI(kEpi) == LLM_EPI_SWIGLU && (kAct == kActF16 || kAct == kActBF16)) {
    if constexpr (MV_PLAIN_STAGE != 0) return staged_swiglu_rows<kAct, kEpi, R, PlainRound<kAct, R>>(job, early);
    return early_swiglu_rows<kAct, kEpi, R, PlainRound<kAct, R>>(job, early);
  } else if (MV_EPI(kEpi) == LLM_EPI_SWIGLU) {
    switch (job_format<kEpi>(job)) {
      MV_PIPELINED_FORMATS(return rows_loop_pipelined<kFormat, kEpi, R>(job, ActView{}, nullptr, early))
      default: break;
    }
  } else if (kAct == kActF16 || kAct == kActBF16 || kAct == kActF32) {
    return early_rows<kAct, kEpi, R, PlainRound<kAct, R>>(job, early);
  } else {
    const int format = job_format<kEpi>(job);
    if constexpr (kAct == kActQ8K && B::template holds_format<kGpuQ4_K>() && B::template holds_format<kGpuQ6_K>()) {
      // Q4_K and Q6_K rows (llm_mv_early_mixed). The round a warp holds
      // across the wait is of one format: a run-time one would hold the
      // larger's fields (that kernel spilled 24-40 bytes a thread). So the
      // warps whose first rows are Q4_K load them early, as in a job of Q4_K
      // rows; Q6_K rows (Q4_K_M's V: 1,024 of 8B's 6,144 Q/K/V rows) are
      // loaded after the preparation.
      if (format == 0) return early_rows<kAct, kEpi, R, QuantRound<kGpuQ4_K, R>, QuantRound<kGpuQ6_K, R>>(job, early);
    }
    if constexpr (!B::q4k_q6k()) {
      switch (format) {
        MV_EARLY_QUANT_FORMATS(return early_rows<kAct, kEpi, R, QuantRound<kFormat, R>>(job, early))
        default: break;
      }
    }
  }
  __trap();  // the plan launches these for the formats above only (llm_mv_early, llm_mv_early_mixed)
}

template <int kAct, int kEpi, class B = MvBuild<>>
__device__ __forceinline__ void matvec_early(const LlmMatvecJob& job) {
  __shared__ double red[MV_WARPS];
  const EarlyPrep<kAct, mv_share<kAct, kEpi>(), kEpi> early{dynamic_smem(), red};
  switch (job.rows_per_warp) {
    MV_ROWS_CASE(4, early_rows_of<kAct, kEpi, 4, B>(job, early))
    MV_ROWS_CASE(2, early_rows_of<kAct, kEpi, 2, B>(job, early))
    MV_ROWS_CASE(1, early_rows_of<kAct, kEpi, 1, B>(job, early))
    default: __trap();
  }
  if constexpr (kEpi == (LLM_EPI_SWIGLU | MV_HANDOFF)) handoff_swiglu<MV_WARPS, MvCluster<kAct>>(job);
  chain_signal(job.chain, (LlmStepState*)job.state);
}

// The build this file is compiled as (MvBuild; LlmKernels::matvec defines
// MV_ACT, MV_FORMAT and MV_ROWS, and by default it holds every product). The
// kernels of other activation kinds are a trap in it (the plan never launches
// them from it), which makes a build of one kind quicker to compile.
#ifndef MV_ACT
#define MV_ACT (-1)
#endif
#ifndef MV_FORMAT
#define MV_FORMAT 0
#endif
#ifndef MV_ROWS
#define MV_ROWS 0
#endif
using MvThisBuild = MvBuild<MV_ACT, MV_FORMAT, MV_ROWS>;

// (dims: the kernel's __cluster_dims__, or nothing.)
#define MATVEC_KERNEL(act_name, act, epi_name, epi, dims)                                        \
  extern "C" __global__ void __launch_bounds__(MV_THREADS, MV_MIN_BLOCKS) dims                    \
      matvec_##act_name##_##epi_name(const __grid_constant__ LlmMatvecJob job) {                  \
    if constexpr (MvThisBuild::holds_act<act>()) {                                                \
      matvec<act, epi, MvThisBuild>(job);                                                         \
    } else {                                                                                      \
      __trap();                                                                                   \
    }                                                                                             \
  }
#define MATVEC_KERNELS(act_name, act, dims)                  \
  MATVEC_KERNEL(act_name, act, store, LLM_EPI_STORE, dims)   \
  MATVEC_KERNEL(act_name, act, add, LLM_EPI_ADD, dims)       \
  MATVEC_KERNEL(act_name, act, swiglu, LLM_EPI_SWIGLU, dims) \
  MATVEC_KERNEL(act_name, act, logits, LLM_EPI_LOGITS, dims)

// The hand-off kernels (llm_handoff.cuh), built by `kernel` (MATVEC_KERNEL or
// MATVEC_EARLY_KERNEL): gate/up handing its output over for the quantized
// kinds, the add product taking it for both (Q8_K: Wo's, from the attention).
#define MATVEC_HANDOFF_KERNELS(kernel)                                                              \
  kernel(q8x32, kActQ8x32, add_handoff, LLM_EPI_ADD | MV_HANDOFF, MV_QUANT_CLUSTER_DIMS)           \
  kernel(q8k, kActQ8K, add_handoff, LLM_EPI_ADD | MV_HANDOFF, MV_QUANT_CLUSTER_DIMS)               \
  kernel(q8x32, kActQ8x32, swiglu_handoff, LLM_EPI_SWIGLU | MV_HANDOFF, MV_QUANT_CLUSTER_DIMS)     \
  kernel(q8k, kActQ8K, swiglu_handoff, LLM_EPI_SWIGLU | MV_HANDOFF, MV_QUANT_CLUSTER_DIMS)

MATVEC_KERNELS(q8x32, kActQ8x32, MV_QUANT_CLUSTER_DIMS)
MATVEC_KERNELS(q8k, kActQ8K, MV_QUANT_CLUSTER_DIMS)
MATVEC_HANDOFF_KERNELS(MATVEC_KERNEL)
MATVEC_KERNELS(f16, kActF16, )
MATVEC_KERNELS(bf16, kActBF16, )
MATVEC_KERNELS(f32, kActF32, )

#define MATVEC_EARLY_KERNEL(act_name, act, epi_name, epi, dims)                                  \
  extern "C" __global__ void __launch_bounds__(MV_THREADS, MV_MIN_BLOCKS) dims                    \
      matvec_##act_name##_##epi_name##_early(const __grid_constant__ LlmMatvecJob job) {          \
    if constexpr (MvThisBuild::holds_act<act>()) {                                                \
      matvec_early<act, epi, MvThisBuild>(job);                                                   \
    } else {                                                                                      \
      __trap();                                                                                   \
    }                                                                                             \
  }
#define MATVEC_EARLY_KERNELS(act_name, act, dims)                  \
  MATVEC_EARLY_KERNEL(act_name, act, store, LLM_EPI_STORE, dims)   \
  MATVEC_EARLY_KERNEL(act_name, act, add, LLM_EPI_ADD, dims)       \
  MATVEC_EARLY_KERNEL(act_name, act, swiglu, LLM_EPI_SWIGLU, dims)

MATVEC_EARLY_KERNELS(q8x32, kActQ8x32, MV_QUANT_CLUSTER_DIMS)
MATVEC_EARLY_KERNELS(q8k, kActQ8K, MV_QUANT_CLUSTER_DIMS)
MATVEC_HANDOFF_KERNELS(MATVEC_EARLY_KERNEL)
// The 16-bit gate/up early kernels are in the 16-bit kinds' builds only (and
// in the build of every kind), so the quantized builds' CUBINs stay byte for
// byte what they were without them: with them there (traps), 1B Q6_K decoded
// 0.6-1.0% slower on the H200 with its kernels' machine code unchanged, for a
// reason not found (docs/perf-notes.md).
static_assert(kActF16 == 2 && kActBF16 == 3, "the #if below names the 16-bit kinds by number");
#if MV_ACT < 0 || MV_ACT == 2 || MV_ACT == 3
#define MATVEC_16BIT_SWIGLU_EARLY(act_name, act) MATVEC_EARLY_KERNEL(act_name, act, swiglu, LLM_EPI_SWIGLU, )
#else
#define MATVEC_16BIT_SWIGLU_EARLY(act_name, act)
#endif
MATVEC_EARLY_KERNEL(f16, kActF16, store, LLM_EPI_STORE, )
MATVEC_EARLY_KERNEL(f16, kActF16, add, LLM_EPI_ADD, )
MATVEC_16BIT_SWIGLU_EARLY(f16, kActF16)
MATVEC_EARLY_KERNEL(bf16, kActBF16, store, LLM_EPI_STORE, )
MATVEC_EARLY_KERNEL(bf16, kActBF16, add, LLM_EPI_ADD, )
MATVEC_16BIT_SWIGLU_EARLY(bf16, kActBF16)
