// Decode outputs handed over quantized. The add products (Wo, down) read an
// input that no RMSNorm touches: the attention output and the SwiGLU output.
// Every block of such a product quantizes the whole vector into its shared
// memory (llm_act_prep.cuh), 264 blocks repeating one vector's loads,
// reductions and per-value arithmetic on the path between two launches; a
// measurement build that copied the input instead made 1B Q8_0 decode 8%
// faster on the H200 (docs/perf-notes.md). So where the product's activations
// are Q8_0/Q8_1 groups of 32 (kActQ8x32: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0
// weights), the launch that computes the vector quantizes each group once,
// where one block (or a cluster pair) holds it, into the consumer's
// shared-memory layout in global memory, and the consumer's blocks copy it
// (llm_matvec.cu's add_handoff kernels). The arithmetic is q8x32_quad's, so
// the copy holds the bits the consumer would have prepared from those values.
//
// Q8_K activations (Q4_K, Q5_K, Q6_K weights) have one scale per super-block
// of 256 values. The attention output hands them over where a super-block is
// 256 / head_dim query heads of one attention launch: the decode blocks of
// those heads run as one thread-block cluster and exchange their largest
// magnitudes through distributed shared memory (attention_head_handoff_q8k,
// llm_attention.cu). No block of llm_matvec.cu's gate/up kernels holds a
// super-block of the SwiGLU output (a scale per group of 32 instead, faster:
// 1B Q6_K 1,966 against 1,890 tok/s, changed greedy tokens against the
// CPU's; docs/perf-notes.md); the clustered gate/up kernels
// (llm_swiglu_cluster.cu) hand it over from clusters that own one each.
#pragma once

#include "gemm_prims.cuh"  // dynamic_smem
#include "llm_act_prep.cuh"
#include "llm_jobs.cuh"

// The four int8 values of lanes 4k .. 4k + 3 as one little-endian word, in
// lane 4k (the other lanes' results are partial).
__device__ __forceinline__ uint32_t pack_lane_bytes(int q) {
  const int lane = threadIdx.x & 31;
  const int b = q & 0xff;
  const int b1 = __shfl_xor_sync(0xffffffffu, b, 1);
  const int pair = (lane & 1) ? (b1 | (b << 8)) : (b | (b1 << 8));
  const int pair2 = __shfl_xor_sync(0xffffffffu, pair, 2);
  return (uint32_t)((lane & 2) ? (pair2 | (pair << 16)) : (pair | (pair2 << 16)));
}

__device__ __forceinline__ int warp_int_sum(int v, int width) {
  for (int o = 1; o < width; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// A warp's int8 values (lane i: value i of group g) into the layout's values;
// lanes from `lanes` on store nothing.
__device__ __forceinline__ void handoff_store_values(int q, uint8_t* base, int g, int lanes = 32) {
  const uint32_t word = pack_lane_bytes(q);
  const int lane = threadIdx.x & 31;
  if ((lane & 3) == 0 && lane < lanes) ((uint32_t*)(base + g * LLM_GROUP))[lane >> 2] = word;
}

// Q8_0 / Q8_1 of a group whose largest magnitude is `amax` (x: this lane's
// value): q8x32_quad's arithmetic.
struct Q8x32Scale {
  float dd, id;
  __device__ __forceinline__ explicit Q8x32Scale(float amax) : dd(amax / 127.0f) { id = dd != 0.0f ? 1.0f / dd : 0.0f; }
  __device__ __forceinline__ int quantize(float x) const { return (int)roundf(__fmul_rn(x, id)); }
};
// The group's d, s and sum (q8x32_view's arrays), from its integer total.
__device__ __forceinline__ void handoff_q8x32_scales(const Q8x32Scale& sc, int total, uint8_t* base, int cols,
                                                     int g) {
  const ActView v = q8x32_view(base, cols);
  ((float*)v.d)[g] = half_to_float(float_to_half(sc.dd));
  ((float*)v.s)[g] = half_to_float(float_to_half(__fmul_rn((float)total, sc.dd)));
  ((int*)v.sum)[g] = total;
}

// Group g of a vector of `cols` values, held by a whole warp (lane i: value
// i), quantized into the kActQ8x32 layout at base.
__device__ __forceinline__ void handoff_group(float x, uint8_t* base, int cols, int g) {
  float amax = fabsf(x);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const Q8x32Scale sc(amax);
  const int q = sc.quantize(x);
  handoff_store_values(q, base, g);
  const int total = warp_int_sum(q, 32);
  if ((threadIdx.x & 31) == 0) handoff_q8x32_scales(sc, total, base, cols, g);
}

// --- Q8_K super-blocks (the attention output) -------------------------------
// Spread over blocks, each part's first value of largest magnitude is a Peak
// (llm_act_prep.cuh), and the parts' peaks are combined in index order.
// The peak of a warp's values (lane i: value i), in every lane.
__device__ __forceinline__ Peak warp_peak(float x) { return warp_peak(Peak{__float_as_uint(fabsf(x)), x}); }
__device__ __forceinline__ uint2 peak_bits(Peak p) { return make_uint2(p.mag, __float_as_uint(p.value)); }
__device__ __forceinline__ Peak peak_of(uint2 b) { return Peak{b.x, __uint_as_float(b.y)}; }

// Values [i0, i0 + 32) of a super-block whose peak is `peak`, held by a whole
// warp (lane l: value i0 + l; i0 a multiple of 32), quantized into the
// kActQ8K layout of `cols` values at base: q8k_super's arithmetic, so the
// bits a consumer would have prepared from the same values.
__device__ __forceinline__ void handoff_q8k_warp(float x, Peak peak, uint8_t* base, int cols, int i0) {
  const int lane = threadIdx.x & 31;
  const float iscale = peak.mag != 0 ? -127.0f / peak.value : 0.0f;
  const int q = peak.mag != 0 ? q8k_quantize(iscale, x) : 0;
  handoff_store_values(q, base, i0 / LLM_GROUP);
  const int part = warp_int_sum(q, 16);  // a sum of 16 is half a warp
  const ActView v = q8k_view(base, cols);
  if ((lane & 15) == 0) ((int*)v.sum)[(i0 + lane) / 16] = part;
  if (lane == 0 && i0 % LLM_SUPER == 0) ((float*)v.d)[i0 / LLM_SUPER] = peak.mag != 0 ? 1.0f / iscale : 0.0f;
}

// A consumer's copy of a hand-off (kAct's layout): its bytes, from global into
// shared memory (every block of the cluster copies every kBlocks-th 16 bytes
// into every block's shared memory, as prepare_activations' slices).
template <int kThreads, class Share, int kAct = kActQ8x32>
__device__ ActView copy_handoff(const uint8_t* src, int cols, uint8_t* smem) {
  static_assert(kAct == kActQ8x32 || kAct == kActQ8K, "hand-offs are Q8_0/Q8_1 groups or Q8_K super-blocks");
  Share::started();
  Share::ready();
  const uint32_t bytes = llm_act_smem_bytes(kAct, cols);
  const uint32_t step = 16u * kThreads * Share::kBlocks;
  uint32_t i = 16u * (threadIdx.x + kThreads * Share::rank());
  for (; i + 16 <= bytes; i += step) Share::put((uint4*)(smem + i), __ldcg((const uint4*)(src + i)));
  // (Layouts end on 4-byte boundaries: a last piece of 4-12 bytes.)
  for (; i < bytes; i += 4) Share::put((uint32_t*)(smem + i), __ldcg((const uint32_t*)(src + i)));
  Share::finish();
  return kAct == kActQ8K ? q8k_view(smem, cols) : q8x32_view(smem, cols);
}

// --- The SwiGLU output (llm_matvec.cu's gate/up kernels) --------------------
// A warp's task is R consecutive rows, and the tasks of a block's k-th round
// are its warps' in order: kWarps * R consecutive rows. With R = 4 that is a
// group; with R = 2 half of one, whose other half is the round of the other
// block of its cluster pair (blocks 2c and 2c + 1). The epilogue stages each
// output in shared memory (swiglu_stage_of); once every row of the block is
// done the block quantizes its rounds, a pair exchanging each half's largest
// magnitude and integer sum through distributed shared memory.

// Where row0's task (of R rows) stages its outputs: its block's round, then
// its warp's place in the round.
template <int kWarps, int R>
__device__ __forceinline__ float* swiglu_stage_of(const LlmMatvecJob& job, int row0) {
  const int warp = threadIdx.x >> 5;
  const int round = (row0 / R - ((int)blockIdx.x * kWarps + warp)) / ((int)gridDim.x * kWarps);
  return (float*)(dynamic_smem() + job.stage_at) + (round * kWarps + warp) * R;
}

// Every thread of the block, after every warp's rows (Pair: the cluster's
// ActShare, of two blocks where R = 2).
template <int kWarps, class Pair>
__device__ void handoff_swiglu(const LlmMatvecJob& job) {
  const int R = job.rows_per_warp, round_rows = kWarps * R;
  const int grid_warps = (int)gridDim.x * kWarps, first = (int)blockIdx.x * kWarps;
  const int tasks = job.rows / R;
  const int rounds = first < tasks ? (tasks - 1 - first) / grid_warps + 1 : 0;
  const int most = llm_swiglu_stage_rounds(tasks, grid_warps);
  float* stage = (float*)(dynamic_smem() + job.stage_at);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint8_t* base = (uint8_t*)job.out;
  __syncthreads();
  if (round_rows == LLM_GROUP) {  // R = 4: the block's rounds are whole groups
    for (int k = warp; k < rounds; k += kWarps) {
      handoff_group(stage[k * LLM_GROUP + lane], base, job.rows, (first + k * grid_warps) * R / LLM_GROUP);
    }
    return;
  }
  if constexpr (Pair::kBlocks == 2) {
    // R = 2: the pair's two halves of each group, each half's largest
    // magnitude, then each half's integer sum, exchanged. (A last group's
    // lanes 16-31 hold zeros, which neither a largest magnitude nor a sum sees.)
    float* peak = stage + most * round_rows;  // [round][half]
    int* part = (int*)(peak + 2 * most);      // [round][half]
    const int half = Pair::rank();
    auto value = [&](int k) { return lane < LLM_GROUP / 2 ? stage[k * round_rows + lane] : 0.0f; };
    for (int k = warp; k < rounds; k += kWarps) {
      float m = fabsf(value(k));
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      if (lane == 0) Pair::put(peak + 2 * k + half, m);
    }
    Pair::finish();
    for (int k = warp; k < rounds; k += kWarps) {
      const int g = (first + k * grid_warps) * R / LLM_GROUP;
      const Q8x32Scale sc(fmaxf(peak[2 * k], peak[2 * k + 1]));
      const int q = lane < LLM_GROUP / 2 ? sc.quantize(value(k)) : 0;
      handoff_store_values(q, base + LLM_GROUP / 2 * half, g, LLM_GROUP / 2);
      const int sum = warp_int_sum(q, 32);
      if (lane == 0) Pair::put(part + 2 * k + half, sum);
    }
    Pair::finish();
    if (half != 0 || lane != 0) return;
    for (int k = warp; k < rounds; k += kWarps) {
      const int g = (first + k * grid_warps) * R / LLM_GROUP;
      const Q8x32Scale sc(fmaxf(peak[2 * k], peak[2 * k + 1]));
      handoff_q8x32_scales(sc, part[2 * k] + part[2 * k + 1], base, job.rows, g);
    }
  } else {
    __trap();  // the plan hands over R = 2 only in clusters of two
  }
}
