// Decode attention of one query head per block (LlmAttentionJob with
// heads_per_block 1 and one token; the attention_head kernel). What bounds a
// decode attention launch is its chain of dependent round trips, not its few
// hundred kilobytes, so this block is laid out for few of them:
//   - The cached keys and values of its first tile of positions are loaded into
//     registers before the block waits for the Q/K/V launch: rows before the
//     token's position were written by earlier steps and do not change, and the
//     position itself is final before a step starts (finish_step advances it,
//     and a step's submission begins after the previous one has ended).
//   - A key or value row is read by the lanes of a row group together (16 bytes,
//     eight dimensions each), so one warp load covers whole rows and each lane
//     keeps LLM_ATTN_DECODE_LOADS loads of keys and as many of values in flight.
//   - Each warp keeps its own online softmax over its positions; the warps'
//     (max, sum, weighted values) are combined once, at the end.
//   - A split with no positions (a context shorter than the splits' chunks:
//     7 of 1B's 8 splits at tg128) leaves at once, without waiting, and split
//     0 of its head counts it finished. Waiting, those blocks held their SMs
//     and polled the count until Q/K/V ended: 1B Q6_K decoded 2% slower than
//     with one split (docs/perf-notes.md).
// The rotated query and the new key and value (the token's own position) come
// from the Q/K/V launch after the wait, in one round trip -- or, where the
// Q/K/V launch tags them (LlmAttentionJob::qkv_tag), as soon as they are
// written, without the wait (llm_tagged.cuh).
#pragma once

#include "llm_attention_block.cuh"
#include "llm_tagged.cuh"

// Decoded f16 values of one 16-byte piece of a key or value row.
__device__ __forceinline__ void unpack_half8(const uint4& w, float (&f)[8]) {
  const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = half_to_float((uint16_t)(u[i] & 0xffffu));
    f[2 * i + 1] = half_to_float((uint16_t)(u[i] >> 16));
  }
}

// The block's shared memory.
struct DecodeHeadShared {
  float q[AT_MAX_HD];  // the rotated query
  // The new position's rotated key and value, as the cache holds them (the
  // block that appends them may run after this one).
  __align__(16) uint16_t k_new[AT_MAX_HD];
  __align__(16) uint16_t v_new[AT_MAX_HD];
  float warp_max[LLM_ATTN_DECODE_WARPS], warp_sum[LLM_ATTN_DECODE_WARPS];
  float warp_acc[LLM_ATTN_DECODE_WARPS][AT_MAX_HD];
  uint2 peaks[LLM_ATTN_DECODE_WARPS];  // Q8_K hand-off: each warp's Peak,
  uint2 block_peaks[8];                // and each cluster block's (written by the others)
  bool last_block;
};

// The head's outputs (threads [0, kHd), r) handed over as Q8_K where one
// super-block is the heads of a cluster of kCluster blocks (256 / kHd;
// attention_head_handoff_q8k): each block's first largest magnitude goes to
// every block of the cluster (distributed shared memory), and each block
// quantizes its own outputs with the super-block's. Every thread of every
// block of the cluster calls it (ActShare<kCluster>::started() before).
template <int kHd, int kCluster>
__device__ __forceinline__ void handoff_head_q8k(const LlmAttentionJob& job, DecodeHeadShared& sh, size_t out_at,
                                                 float r) {
  static_assert(kHd * kCluster == LLM_SUPER, "a cluster's heads are one super-block");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  constexpr int kWarps = kHd / 32;
  Peak p{0u, 0.0f};
  if (warp < kWarps) p = warp_peak(r);
  if (warp < kWarps && lane == 0) sh.peaks[warp] = peak_bits(p);
  __syncthreads();
  Peak mine = peak_of(sh.peaks[0]);
#pragma unroll
  for (int w = 1; w < kWarps; ++w) mine = first_peak(mine, peak_of(sh.peaks[w]));
  Peak all = mine;
  if constexpr (kCluster > 1) {
    using Cluster = ActShare<kCluster>;
    Cluster::ready();
    if (threadIdx.x == 0) Cluster::put(&sh.block_peaks[Cluster::rank()], peak_bits(mine));
    Cluster::finish();
    all = peak_of(sh.block_peaks[0]);
#pragma unroll
    for (int b = 1; b < kCluster; ++b) all = first_peak(all, peak_of(sh.block_peaks[b]));
  }
  if (warp < kWarps) handoff_q8k_warp(r, all, (uint8_t*)job.out, job.out_stride, (int)out_at + 32 * warp);
}

// Block (query head blockIdx.x, split blockIdx.y) of LLM_ATTN_DECODE_THREADS
// threads; kDpl = head_dim / 32. Waits for the launches ahead itself (after
// its early loads); returns the blocks the caller counts finished (0: the
// block left at once, llm_chain.cuh's chain_signal). kHandoff: the output is
// handed over quantized for Wo (LLM_HANDOFF_*; Q8_K by clusters of kCluster
// heads, handoff_head_q8k).
template <int kDpl, int kHandoff, int kCluster = 1>
__device__ uint32_t attention_head_decode(const LlmAttentionJob& job, DecodeHeadShared& sh) {
  enum {
    kHd = 32 * kDpl,
    kRowLanes = kHd / 8,                          // lanes that read one row, 8 dimensions each
    kRowsPerLoad = 32 / kRowLanes,                // positions one warp load covers
    kLoads = LLM_ATTN_DECODE_LOADS,               // per lane, keys and values each
    kTile = LLM_ATTN_DECODE_WARPS * kRowsPerLoad * kLoads,  // positions per tile
  };
  const int head = blockIdx.x, split = blockIdx.y;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int piece = lane % kRowLanes, sub = lane / kRowLanes;  // dims [8 piece, 8 piece + 8) of row `sub`
  const int n_gqa = job.n_head / job.n_kv, kvh = head / n_gqa;
  const LlmStepState* state = (const LlmStepState*)job.state;
  const uint32_t tag = job.qkv_tag != 0 ? launch_tag(state, job.qkv_tag) : 0u;
  const AttentionSpan span = attention_span(job, split, 0);
  const int pos = span.pos, t0 = span.t0, t1 = span.t1;
  if (split >= span.active) return 0;  // no positions: split 0 counts this block
  if constexpr (kHandoff == LLM_HANDOFF_Q8K && kCluster > 1) {
    // (`active` is the same in every block of the cluster: one split, one
    // position. Without a merge the cluster exchanges its peaks.)
    if (span.active == 1) ActShare<kCluster>::started();
  }
  const uint32_t counts = split == 0 ? 1 + job.splits - span.active : 1;
  const size_t head_base = (size_t)kvh * job.capacity * kHd;
  const uint16_t* k_cache = (const uint16_t*)job.k_cache + head_base + 8 * piece;
  const uint16_t* v_cache = (const uint16_t*)job.v_cache + head_base + 8 * piece;
  // Position of load j of a tile, for this lane (warps interleaved, so that a
  // short context still spreads over all of them).
  auto position = [=](int tile, int j) { return tile + (j * LLM_ATTN_DECODE_WARPS + warp) * kRowsPerLoad + sub; };

  // This lane's pieces of a tile's cached key and value rows (never the new
  // position's, which is not in the cache yet).
  uint4 kraw[kLoads], vraw[kLoads];
  auto load_tile = [&](int tile) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const int t = position(tile, j);
      if (t < t1 && t < pos) {
        kraw[j] = __ldcg((const uint4*)(k_cache + (size_t)t * kHd));
        vraw[j] = __ldcg((const uint4*)(v_cache + (size_t)t * kHd));
      }
    }
  };

  // Before the wait: the first tile's rows, the rest of the range asked of
  // L2, and this thread's RoPE pair.
  load_tile(t0);
  if (prefetches_kv(job)) prefetch_kv_rows<LLM_ATTN_DECODE_THREADS>(job, kvh, span, t0 + kTile);
  // Threads [0, kHd / 2) rotate a pair of the query; [kHd / 2, kHd), where the
  // block holds the new position, a pair of the key (and take the value's).
  const bool has_new = job.append && t0 <= pos && pos < t1;
  const int pair = threadIdx.x % (kHd / 2);
  const bool rotates_q = threadIdx.x < kHd / 2, rotates_k = has_new && !rotates_q && threadIdx.x < kHd;
  int d0, d1;
  pair_dims(pair, job.n_rot, job.neox, &d0, &d1);
  const bool rotated = pair < job.n_rot / 2;
  float2 cs = make_float2(1.0f, 0.0f);
  if ((rotates_q || rotates_k) && rotated) {
    cs = ((const float2*)job.rope)[(size_t)pos * (job.n_rot / 2) + pair];
  }

  // This thread's values of the Q/K/V launch: the query's pair, or the new
  // key's and value's (k_at, v_at: their rows).
  const size_t q_at = (size_t)head * kHd, k_at = (size_t)(job.n_head + kvh) * kHd,
               v_at = (size_t)(job.n_head + job.n_kv + kvh) * kHd;
  float in[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (job.qkv_tag != 0) {
    // Every thread that needs values polls its words until they carry the tag.
    // (Thread 0 polling the count of the launches ahead of Q/K/V first, the
    // others waiting, was 0.9% slower on 1B Q6_K: docs/perf-notes.md.)
    chain_stamp(job.chain, state, LLM_STAMP_START);
    const uint64_t* qkv = (const uint64_t*)job.qkv;
    if (rotates_q) {
      const uint64_t* const words[2] = {qkv + q_at + d0, qkv + q_at + d1};
      TaggedWords<2> q(words);
      q.wait(tag);
      in[0] = q.v[0];
      in[1] = q.v[1];
    } else if (rotates_k) {
      const uint64_t* const words[4] = {qkv + k_at + d0, qkv + k_at + d1, qkv + v_at + d0, qkv + v_at + d1};
      TaggedWords<4> kv(words);
      kv.wait(tag);
      for (int i = 0; i < 4; ++i) in[i] = kv.v[i];
    }
    chain_stamp(job.chain, state, LLM_STAMP_RELEASED);
  } else {
    chain_wait(job.chain, state);
    const float* qkv = (const float*)job.qkv;
    if (rotates_q) {
      in[0] = __ldcg(qkv + q_at + d0);
      in[1] = __ldcg(qkv + q_at + d1);
    } else if (rotates_k) {
      in[0] = __ldcg(qkv + k_at + d0);
      in[1] = __ldcg(qkv + k_at + d1);
      in[2] = __ldcg(qkv + v_at + d0);
      in[3] = __ldcg(qkv + v_at + d1);
    }
  }
  if (rotates_q) {
    float a = in[0], b = in[1];
    if (rotated) rotate(a, b, cs);
    sh.q[d0] = a;
    sh.q[d1] = b;
  } else if (rotates_k) {
    float a = in[0], b = in[1];
    const float va = in[2], vb = in[3];
    if (rotated) rotate(a, b, cs);
    const uint16_t ka = float_to_half(a), kb = float_to_half(b), ha = float_to_half(va), hb = float_to_half(vb);
    sh.k_new[d0] = ka;
    sh.k_new[d1] = kb;
    sh.v_new[d0] = ha;
    sh.v_new[d1] = hb;
    if (head % n_gqa == 0) {  // the KV head's first query head appends
      uint16_t* kc = (uint16_t*)job.k_cache + head_base + (size_t)pos * kHd;
      uint16_t* vc = (uint16_t*)job.v_cache + head_base + (size_t)pos * kHd;
      kc[d0] = ka;
      kc[d1] = kb;
      vc[d0] = ha;
      vc[d1] = hb;
    }
  }
  __syncthreads();
  chain_stamp(job.chain, state, LLM_STAMP_PREPARED);

  float q[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) q[i] = sh.q[8 * piece + i];
  // This warp's online softmax: running max (every lane holds it), the sum of
  // its positions' weights (lanes of piece 0 count a position once) and this
  // lane's eight dimensions of the weighted values of its row group.
  float run_max = NEG_INF, run_sum = 0.0f, acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i] = 0.0f;

  for (int tile = t0; tile < t1; tile += kTile) {
    if (tile != t0) load_tile(tile);
    float s[kLoads];
    float tile_max = NEG_INF;
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const int t = position(tile, j);
      if (t == pos) kraw[j] = *(const uint4*)(sh.k_new + 8 * piece);
      float k[8];
      unpack_half8(kraw[j], k);
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) dot += q[i] * k[i];
#pragma unroll
      for (int o = 1; o < kRowLanes; o <<= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
      s[j] = t < t1 ? dot * job.scale : NEG_INF;
      tile_max = fmaxf(tile_max, s[j]);
    }
    tile_max = warp_max(tile_max);
    if (tile_max == NEG_INF) continue;  // none of this warp's positions (warp-uniform)
    const float m_new = fmaxf(run_max, tile_max);
    const float corr = expf(run_max - m_new);
    run_max = m_new;
    run_sum *= corr;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] *= corr;
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const int t = position(tile, j);
      if (t >= t1) continue;
      const float e = expf(s[j] - m_new);
      if (piece == 0) run_sum += e;
      float v[8];
      if (t == pos) vraw[j] = *(const uint4*)(sh.v_new + 8 * piece);
      unpack_half8(vraw[j], v);
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[i] += e * v[i];
    }
  }

  // The warp's row groups summed, then the warps' parts combined.
#pragma unroll
  for (int o = kRowLanes; o < 32; o <<= 1) {
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
  }
  run_sum = warp_sum(run_sum);
  if (sub == 0) {
#pragma unroll
    for (int i = 0; i < 8; ++i) sh.warp_acc[warp][8 * piece + i] = acc[i];
  }
  if (lane == 0) {
    sh.warp_max[warp] = run_max;
    sh.warp_sum[warp] = run_sum;
  }
  __syncthreads();
  float m = NEG_INF;
#pragma unroll
  for (int w = 0; w < LLM_ATTN_DECODE_WARPS; ++w) m = fmaxf(m, sh.warp_max[w]);
  const size_t out_at = (size_t)head * kHd;
  const int o = threadIdx.x;
  float num = 0.0f, den = 0.0f;
  if (o < kHd) {
#pragma unroll
    for (int w = 0; w < LLM_ATTN_DECODE_WARPS; ++w) {
      if (sh.warp_max[w] == NEG_INF) continue;  // a warp without positions
      const float c = expf(sh.warp_max[w] - m);
      num += sh.warp_acc[w][o] * c;
      den += sh.warp_sum[w] * c;
    }
  }
  if (span.active == 1) {
    if constexpr (kHandoff == LLM_HANDOFF_Q8K) {
      handoff_head_q8k<kHd, kCluster>(job, sh, out_at, o < kHd ? num / den : 0.0f);
    } else if (o < kHd) {  // whole warps (kHd is 32 kDpl)
      if constexpr (kHandoff == LLM_HANDOFF_Q8X32) {
        store_attention_handoff(job, out_at + o, num / den);
      } else {
        store_attention_out(job, out_at + o, num / den);
      }
    }
    return counts;
  }
  // Leave this split's part (weighted values, max, sum) for the unit's merge.
  float* part = (float*)job.partial + ((size_t)head * job.splits + split) * (kHd + 2);
  if (o < kHd) part[o] = num;
  if (o == 0) {
    part[kHd] = m;
    part[kHd + 1] = den;
  }
  merge_attention_splits<LLM_ATTN_DECODE_THREADS, CtaSync, kHandoff>(job, head, span.active, 1, out_at,
                                                                     sh.last_block);
  return counts;
}

// attention_head_decode for the job's head size.
template <int kHandoff = LLM_HANDOFF_NONE>
__device__ __forceinline__ uint32_t attention_head_decode_unit(const LlmAttentionJob& job, DecodeHeadShared& sh) {
  switch (job.head_dim) {
    case 64: return attention_head_decode<2, kHandoff>(job, sh);
    case 128: return attention_head_decode<4, kHandoff>(job, sh);
    default: return attention_head_decode<8, kHandoff>(job, sh);
  }
}
