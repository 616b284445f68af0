// Gate/up with SwiGLU of a decode step whose output goes to down as Q8_K
// super-blocks (llm_handoff.cuh), from thread-block clusters.
//
// Why: down's activations are Q8_K, one scale per super-block of 256 SwiGLU
// outputs, and the gate/up kernels of llm_matvec.cu spread a super-block's
// rows over warps of many blocks; so every down block quantized all of the
// SwiGLU output itself (8B: 14,336 values in each of 256 blocks, the step's
// longest preparation). Here a cluster of C blocks owns super-block c (rows
// 256 c .. 256 c + 255 of gate and up, 256 / C a block, as many a warp): its
// blocks trade their outputs through distributed shared memory, and one warp
// quantizes the super-block with q8k_super -- the bits down's preparation would
// have made of the same values -- into kActQ8K's layout at job.out, which
// down's blocks copy (copy_handoff). The rows' products are the pipelined
// loop's (rows_loop_pipelined, llm_matvec.cu), in its order: the same sums.
// On the H200, with clusters of four, 8B Q4_K_M decoded 0.25% and 8B Q6_K
// 1.4% faster; 1B Q6_K in clusters of eight 16% slower (docs/perf-notes.md).
#include "gemm_prims.cuh"  // dynamic_smem
#include "llm_chain.cuh"
#include "llm_cluster.cuh"
#include "llm_matvec_rows.cuh"
#include "llm_swiglu_cluster.cuh"

#define SC_THREADS LLM_SWIGLU_CLUSTER_THREADS
#define SC_WARPS (SC_THREADS / 32)

// One round of a warp's gate/up pipeline: task (R rows), matrix (gate, up), round.
struct ScStep {
  int task, mat, round;
};

// Gate and up rows [row0, row0 + n) of the warp (n a multiple of R), pipelined
// as rows_loop_pipelined: the loads of the next round go out before the
// products of this one, and the first round before the block waits for the
// launches ahead (`prepare` waits and returns the activations). Each row's
// silu(gate) * up goes into the stage of every block of the cluster, at
// row - stage_base.
template <int kGate, int R, int C, class Prepare>
__device__ __forceinline__ void gate_up_rows(const LlmMatvecJob& job, int row0, int n, float* stage, int stage_base,
                                             const Prepare& prepare) {
  constexpr int kU = mv_per_row(MV_PIPE_IN_FLIGHT, R);
  const int lane = threadIdx.x & 31;
  const int groups = job.cols / LLM_GROUP;
  const int rounds = (groups + 32 * kU - 1) / (32 * kU);
  const int steps = n / R * 2 * rounds;
  auto load = [&](const ScStep& s, Loaded (&l)[R][kU]) {
    load_round<kGate, R, kU, false>(job.m[s.mat], row0 + s.task * R, groups, s.round * 32 * kU + lane, groups, l);
  };
  auto after = [&](ScStep s) {
    pipe_advance<2>(s.task, s.mat, s.round, rounds, 1);
    return s;
  };
  Loaded cur[R][kU];
  ScStep now{0, 0, 0};
  load(now, cur);
  const ActView a = prepare();
  float y[R], u[R];
#pragma unroll
  for (int r = 0; r < R; ++r) y[r] = u[r] = 0.0f;
  for (int s = 0; s < steps; ++s) {
    Loaded next[R][kU];
    const ScStep then = after(now);
    if (s + 1 < steps) load(then, next);
    const int g0 = now.round * 32 * kU + lane;
    if (now.mat == 1) {
      dot_round<kGate, R, kU>(cur, a, g0, groups, u);
    } else {
      dot_round<kGate, R, kU>(cur, a, g0, groups, y);
    }
    if (now.mat == 1 && now.round == rounds - 1) {
      float h = 0.0f;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float v = llm_silu_times(warp_sum(y[r]), warp_sum(u[r]));
        h = lane == r ? v : h;
        y[r] = u[r] = 0.0f;
      }
      if (lane < R) ActShare<C>::put(stage + row0 + now.task * R + lane - stage_base, h);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int k = 0; k < kU; ++k) cur[r][k] = next[r][k];
    }
    now = then;
  }
}

// Block `rank` of cluster c: gate/up rows 256 c + rank * 256 / C onwards, R
// a warp at a time (kGate: gate's and up's one format). Dynamic shared memory:
// the activations (kActQ8K of job.cols), then the stage (llm_swiglu_cluster_smem_bytes).
template <int C, int R, int kGate>
__device__ __forceinline__ void swiglu_cluster(const LlmMatvecJob& job) {
  __shared__ double red[SC_WARPS];
  uint8_t* smem = dynamic_smem();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int cluster = (int)blockIdx.x / C, rank = ActShare<C>::rank();
  float* stage = (float*)(smem + llm_swiglu_cluster_stage_at(job.cols));  // the super-block's outputs
  LlmStepState* state = (LlmStepState*)job.state;
  ActShare<C>::started();
  const int per_block = LLM_SUPER / C, per_warp = per_block / SC_WARPS;
  const int stage_base = cluster * LLM_SUPER;
  auto prepare = [&] {
    chain_wait(job.chain, state);
    const ActView a = prepare_activations<kActQ8K, SC_THREADS>((const float*)job.in, (const float*)job.norm, job.eps,
                                                              job.cols, smem, red);
    __syncthreads();
    chain_stamp(job.chain, state, LLM_STAMP_PREPARED);
    ActShare<C>::ready();  // (before the first store into another block)
    return a;
  };
  gate_up_rows<kGate, R, C>(job, stage_base + rank * per_block + warp * per_warp, per_warp, stage, stage_base, prepare);
  ActShare<C>::finish();  // every block's stage holds the super-block
  if (rank == 0 && warp == 0) {
    const float4 lo = *(const float4*)(stage + 8 * lane), hi = *(const float4*)(stage + 8 * lane + 4);
    const float vals[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    q8k_super<ActShare<1>>(vals, cluster, q8k_view((uint8_t*)job.out, job.rows));
  }
  chain_signal(job.chain, state);
}

template <int C, int R>
__device__ __forceinline__ void swiglu_cluster_of(const LlmMatvecJob& job) {
  if (job.m[0].format == kGpuQ4_K) return swiglu_cluster<C, R, kGpuQ4_K>(job);
  if (job.m[0].format == kGpuQ6_K) return swiglu_cluster<C, R, kGpuQ6_K>(job);
  __trap();
}

// swiglu_q8k_handoff_c<C>: clusters of C blocks, 256 / C / 8 rows a warp
// taken R at a time (four: one; eight: two, a round of two rows then covers
// 1B's 2,048 columns). LlmMatvecJob: m[0] gate, m[1] up (Q4_K or Q6_K, one
// format), in / norm / eps the input, cols its length, rows the SwiGLU
// rows (a multiple of 256), out the hand-off.
extern "C" __global__ void __launch_bounds__(SC_THREADS, LLM_SWIGLU_CLUSTER_BLOCKS_PER_SM) __cluster_dims__(4, 1, 1)
    swiglu_q8k_handoff_c4(const __grid_constant__ LlmMatvecJob job) {
  swiglu_cluster_of<4, 1>(job);
}
extern "C" __global__ void __launch_bounds__(SC_THREADS, LLM_SWIGLU_CLUSTER_BLOCKS_PER_SM) __cluster_dims__(8, 1, 1)
    swiglu_q8k_handoff_c8(const __grid_constant__ LlmMatvecJob job) {
  swiglu_cluster_of<8, 2>(job);
}
