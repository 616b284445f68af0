// The attention of one block over an f16 KV cache (llm_jobs.cuh,
// LlmAttentionJob), shared by the grouped attention kernel (llm_attention.cu)
// and the persistent decode step (llm_decode_step.cu); decode in units of one
// query head has a block of its own (llm_attention_decode.cuh), which shares
// the merge of split parts below. A block takes a unit: the job's
// heads_per_block query heads of one KV head. It rotates its queries by the
// RoPE table, walks its positions in
// tiles of AT_THREADS (one position per thread for the scores) with an online
// softmax, and either writes the result or, when the positions are split,
// leaves (max, sum, weighted values) for the last split of the unit to merge.
//
// The query, key and value vectors are read through L2 (__ldcg): in the
// persistent step other SMs wrote them since this SM last read those lines.
#pragma once

#include "llm_chain.cuh"
#include "llm_device.cuh"
#include "llm_handoff.cuh"
#include "llm_jobs.cuh"

#define AT_THREADS LLM_ATTN_THREADS
#define AT_WARPS (AT_THREADS / 32)
#define AT_MAX_GQA LLM_ATTN_MAX_GQA
#define AT_MAX_ROT 256
#define AT_MAX_HD 256
#define AT_OUT_PER_THREAD (LLM_ATTN_MAX_OUT / AT_THREADS)
// Positions a split takes at least: below this a context is one block per
// unit, with no merge (the merge costs more than a second tile of keys).
#ifndef AT_MIN_CHUNK
#define AT_MIN_CHUNK LLM_ATTN_MIN_CHUNK
#endif
#define NEG_INF (-__int_as_float(0x7f800000))

// Rotates the pair (a, b) by (c, s) as the CPU does: a' = a c - b s, b' = a s + b c.
__device__ __forceinline__ void rotate(float& a, float& b, float2 cs) {
  const float na = __fsub_rn(__fmul_rn(a, cs.x), __fmul_rn(b, cs.y));
  const float nb = __fadd_rn(__fmul_rn(a, cs.y), __fmul_rn(b, cs.x));
  a = na;
  b = nb;
}

// The two dimensions of a head that pair `p` (0 <= p < head_dim / 2) covers;
// pairs past n_rot / 2 name dimensions RoPE leaves alone.
__device__ __forceinline__ void pair_dims(int p, int n_rot, int neox, int* d0, int* d1) {
  if (!neox) {
    *d0 = 2 * p;
    *d1 = 2 * p + 1;
  } else if (p < n_rot / 2) {
    *d0 = p;
    *d1 = p + n_rot / 2;
  } else {
    *d0 = n_rot + 2 * (p - n_rot / 2);
    *d1 = *d0 + 1;
  }
}

// Rotated key and value of one token, as f16, into the cache (to_cache) and/or
// into k_keep / v_keep (one head's, when not null).
__device__ void store_kv(const LlmAttentionJob& job, const float* qkv, int pos, int first_head, int heads,
                         bool to_cache = true, uint16_t* k_keep = nullptr, uint16_t* v_keep = nullptr) {
  const int hd = job.head_dim, half = hd / 2;
  const float2* cs = (const float2*)job.rope + (size_t)pos * (job.n_rot / 2);
  const float* k = qkv + (size_t)job.n_head * hd;
  const float* v = k + (size_t)job.n_kv * hd;
  for (int i = threadIdx.x; i < heads * half; i += AT_THREADS) {
    const int h = first_head + i / half, pr = i % half;
    int d0, d1;
    pair_dims(pr, job.n_rot, job.neox, &d0, &d1);
    float a = __ldcg(k + h * hd + d0), b = __ldcg(k + h * hd + d1);
    if (pr < job.n_rot / 2) rotate(a, b, cs[pr]);
    const uint16_t ka = float_to_half(a), kb = float_to_half(b);
    const uint16_t va = float_to_half(__ldcg(v + h * hd + d0)), vb = float_to_half(__ldcg(v + h * hd + d1));
    if (to_cache) {
      uint16_t* kc = (uint16_t*)job.k_cache + ((size_t)h * job.capacity + pos) * hd;
      uint16_t* vc = (uint16_t*)job.v_cache + ((size_t)h * job.capacity + pos) * hd;
      kc[d0] = ka;
      kc[d1] = kb;
      vc[d0] = va;
      vc[d1] = vb;
    }
    if (k_keep) {
      k_keep[d0] = ka;
      k_keep[d1] = kb;
      v_keep[d0] = va;
      v_keep[d1] = vb;
    }
  }
}

// kDpl consecutive f16 values of a V row, as loaded.
template <int kDpl> struct VRaw;
template <> struct VRaw<2> { uint32_t w[1]; };
template <> struct VRaw<4> { uint32_t w[2]; };
template <> struct VRaw<8> { uint32_t w[4]; };

template <int kDpl>
__device__ __forceinline__ VRaw<kDpl> load_v(const uint16_t* p) {
  VRaw<kDpl> r;
  if (kDpl == 2) {
    r.w[0] = *(const uint32_t*)p;
  } else if (kDpl == 4) {
    const uint2 v = *(const uint2*)p;
    r.w[0] = v.x;
    r.w[1] = v.y;
  } else {
    const uint4 v = *(const uint4*)p;
    r.w[0] = v.x;
    r.w[1] = v.y;
    r.w[2] = v.z;
    r.w[3] = v.w;
  }
  return r;
}

// Positions of a tile a warp loads values for at once (issued together).
#ifndef AT_V_BATCH
#define AT_V_BATCH 8
#endif
// Key-row loads of a score a thread unrolls (16-byte loads; 16 is a whole
// 128-dimension row).
#ifndef AT_K_UNROLL
#define AT_K_UNROLL 4
#endif

// The block's shared memory (declared once, in the kernel).
struct AttentionShared {
  float q[LLM_ATTN_MAX_OUT];
  float p[AT_MAX_GQA][AT_THREADS];
  float run_max[AT_MAX_GQA], run_sum[AT_MAX_GQA], corr[AT_MAX_GQA];
  float partial_acc[AT_WARPS][LLM_ATTN_MAX_OUT];
  // Decode: the new position's rotated key and value, as the cache holds them
  // (the unit whose block writes them to the cache may run after this one).
  __align__(16) uint16_t k_new[AT_MAX_HD];
  __align__(16) uint16_t v_new[AT_MAX_HD];
  bool last_block;
};

// Scores of one key row (f16, in global or shared memory) against the block's
// query heads: sc[g] = q_g . k.
template <int kHeads>
__device__ __forceinline__ void key_scores(float (&sc)[kHeads], const uint16_t* krow, const float* q, int hd,
                                           int heads) {
#pragma unroll
  for (int g = 0; g < kHeads; ++g) sc[g] = 0.0f;
#pragma unroll AT_K_UNROLL
  for (int d = 0; d < hd; d += 8) {
    const uint4 w = *(const uint4*)(krow + d);
    const uint32_t u[4] = {w.x, w.y, w.z, w.w};
    float kf[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      kf[2 * i] = half_to_float((uint16_t)(u[i] & 0xffffu));
      kf[2 * i + 1] = half_to_float((uint16_t)(u[i] >> 16));
    }
#pragma unroll
    for (int g = 0; g < kHeads; ++g) {
      if (g < heads) {
        const float* qg = q + g * hd + d;
#pragma unroll
        for (int i = 0; i < 8; ++i) sc[g] += qg[i] * kf[i];
      }
    }
  }
}

// Output element i of an attention launch, in the job's output type.
__device__ __forceinline__ void store_attention_out(const LlmAttentionJob& job, size_t i, float r) {
  if (job.out_f16) {
    ((uint16_t*)job.out)[i] = job.out_f16 == 2 ? float_to_bf16(r) : float_to_half(r);
  } else {
    ((float*)job.out)[i] = r;
  }
}

// Output i of a decode step handed over quantized (the attention_head_handoff
// kernel, LlmAttentionJob::out_handoff): by a whole warp, lane l storing output
// i = i0 + l (i0 a multiple of 32), one group of Wo's activations
// (llm_handoff.cuh).
__device__ __forceinline__ void store_attention_handoff(const LlmAttentionJob& job, size_t i, float r) {
  handoff_group(r, (uint8_t*)job.out, job.out_stride, (int)(i / LLM_GROUP));
}

// Every thread of the block, after its writes: whether the block is the last
// of `arrivals` blocks to count themselves at `counter` (`last_block` is
// shared memory). The last one then sees every counted block's writes.
template <class Sync>
__device__ __forceinline__ bool last_to_arrive(unsigned* counter, unsigned arrivals, bool& last_block) {
  __threadfence();
  Sync::sync();
  if (threadIdx.x == 0) last_block = atomicAdd(counter, 1u) == arrivals - 1;
  Sync::sync();
  if (!last_block) return false;
  __threadfence();
  return true;
}

// A merged head's output handed over as Q8_K (merge_attention_splits with
// LLM_HANDOFF_Q8K; one query head a unit): its super-block spans 256 /
// head_dim heads, merged by other blocks, so the merged values wait in split
// 0's parts and the last head of the super-block to be merged quantizes all
// of it (the super-block's counter after the units', zero between launches).
// Only contexts past one split's chunk merge; shorter ones exchange within a
// thread-block cluster instead (attention_head_decode).
template <class Sync>
__device__ void merge_q8k_handoff(const LlmAttentionJob& job, int head, bool& last_block) {
  const int hd = job.head_dim, stride = hd + 2, heads = LLM_SUPER / hd;  // (hd <= AT_MAX_HD = 256)
  const int sb = head * hd / LLM_SUPER;
  unsigned* counter = (unsigned*)job.counters + job.n_head + sb;
  if (!last_to_arrive<Sync>(counter, (unsigned)heads, last_block) || threadIdx.x >= 32) return;
  if (threadIdx.x == 0) *counter = 0;
  // One warp quantizes the super-block, eight values a lane.
  const int lane = threadIdx.x;
  float vals[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int i = sb * LLM_SUPER + 8 * lane + j;
    vals[j] = __ldcg((const float*)job.partial + (size_t)(i / hd) * job.splits * stride + i % hd);
  }
  q8k_super<ActShare<1>>(vals, sb, q8k_view((uint8_t*)job.out, job.out_stride));
}

// Units (of heads_per_block query heads) per KV head: unit u reads KV head
// u / attention_units_per_kv.
__device__ __forceinline__ int attention_units_per_kv(const LlmAttentionJob& job) {
  return job.n_head / job.n_kv / job.heads_per_block;
}

// The positions [t0, t1) that split `split` of a unit attends to, of the
// `active` splits that the token at `pos` (state->pos + token) needs.
struct AttentionSpan {
  int pos, active, t0, t1;
};
__device__ __forceinline__ AttentionSpan attention_span(const LlmAttentionJob& job, int split, int token) {
  AttentionSpan s;
  // Through L2: attention_head_decode reads it before the wait, and this SM's
  // L1 may hold the line from an earlier step.
  s.pos = __ldcg(&((const LlmStepState*)job.state)->pos) + token;
  const int n_pos = s.pos + 1;
  s.active = min(job.splits, (n_pos + AT_MIN_CHUNK - 1) / AT_MIN_CHUNK);
  const int chunk = (n_pos + s.active - 1) / s.active;
  s.t0 = split * chunk;
  s.t1 = min(n_pos, s.t0 + chunk);
  return s;
}

// Decode, self-ordered: the block's cached keys and values (up to
// AT_PREFETCH_POSITIONS of them) asked of L2 before the block waits for the
// launches ahead. They do not depend on those launches, and the weights
// streamed since this layer's last token have evicted them. (A position read
// before the wait may be a step old; then the wrong rows arrive early, and
// nothing else changes.) In stream order there is no wait to hide behind, and
// reading the position first only delays the block.
#ifndef AT_PREFETCH_POSITIONS
#define AT_PREFETCH_POSITIONS 256
#endif
// Whether a block of this job asks L2 for its rows before the wait.
__device__ __forceinline__ bool prefetches_kv(const LlmAttentionJob& job) {
  return job.append && job.chain.chained && AT_PREFETCH_POSITIONS > 0;
}
// The span's cached rows of KV head kvh from position `first` on (at most
// AT_PREFETCH_POSITIONS past the span's start), kThreads threads taking a row
// each in turn.
template <int kThreads>
__device__ __forceinline__ void prefetch_kv_rows(const LlmAttentionJob& job, int kvh, const AttentionSpan& span,
                                                 int first) {
  const size_t row_bytes = 2 * (size_t)job.head_dim;
  const size_t head_base = (size_t)kvh * job.capacity * row_bytes;
  const int end = min(min(span.t1, span.pos), span.t0 + AT_PREFETCH_POSITIONS);
  for (int t = first + threadIdx.x; t < end; t += kThreads) {
    for (size_t off = 0; off < row_bytes; off += 128) {
      prefetch_l2((const char*)job.k_cache + head_base + t * row_bytes + off);
      prefetch_l2((const char*)job.v_cache + head_base + t * row_bytes + off);
    }
  }
}
__device__ __forceinline__ void prefetch_kv(const LlmAttentionJob& job, int unit, int split) {
  if (!prefetches_kv(job)) return;
  const AttentionSpan span = attention_span(job, split, 0);
  if (split >= span.active) return;
  prefetch_kv_rows<AT_THREADS>(job, unit / attention_units_per_kv(job), span, span.t0);
}

// Once a block has left its split's part in job.partial (the unnormalized
// weighted values of its heads, then each head's (max, sum)), the last split
// of the unit to finish merges every split's part into the output. Every
// thread of the block (kThreads) calls it; `last_block` is shared memory.
// kHandoff: the output is handed over (LLM_HANDOFF_*): Q8_0/Q8_1 groups by
// store_attention_handoff; Q8_K super-blocks by merge_q8k_handoff, after the
// merge.
template <int kThreads, class Sync, int kHandoff = LLM_HANDOFF_NONE>
__device__ void merge_attention_splits(const LlmAttentionJob& job, int unit, int active, int heads, size_t out_at,
                                       bool& last_block) {
  const int hd = job.head_dim, n_out = heads * hd, stride = n_out + 2 * heads;
  if (!last_to_arrive<Sync>((unsigned*)job.counters + unit, (unsigned)active, last_block)) return;
  // The other splits' parts come from L2 (__ldcg): this SM's L1 may hold stale
  // lines of the same addresses from an earlier step.
  float* parts = (float*)job.partial + (size_t)unit * job.splits * stride;
  for (int o = threadIdx.x; o < n_out; o += kThreads) {
    const int g = o / hd;
    float m = NEG_INF;
#pragma unroll 8
    for (int s = 0; s < active; ++s) m = fmaxf(m, __ldcg(parts + (size_t)s * stride + n_out + 2 * g));
    float num = 0.0f, den = 0.0f;
#pragma unroll 8
    for (int s = 0; s < active; ++s) {
      const float* ps = parts + (size_t)s * stride;
      const float w = expf(__ldcg(ps + n_out + 2 * g) - m);
      num += __ldcg(ps + o) * w;
      den += __ldcg(ps + n_out + 2 * g + 1) * w;
    }
    if constexpr (kHandoff == LLM_HANDOFF_Q8X32) {
      // (Lanes of a warp take 32 consecutive outputs: n_out and kThreads are
      // multiples of 32.)
      store_attention_handoff(job, out_at + o, num / den);
    } else if constexpr (kHandoff == LLM_HANDOFF_Q8K) {
      parts[o] = num / den;  // over split 0's part, which this thread alone read at o
    } else {
      store_attention_out(job, out_at + o, num / den);
    }
  }
  if (threadIdx.x == 0) ((unsigned*)job.counters)[unit] = 0;
  if constexpr (kHandoff == LLM_HANDOFF_Q8K) merge_q8k_handoff<Sync>(job, unit, last_block);
}

// Block (unit, split, token) of AT_THREADS threads (threadIdx.x below
// AT_THREADS) that meet at Sync. kDpl: head dimensions per lane (head_dim / 32);
// kHeads: the most query heads a block of this instantiation holds.
template <int kDpl, int kHeads, class Sync>
__device__ void attention_block(const LlmAttentionJob& job, AttentionShared& sh, int unit, int split, int token) {
  float* q = sh.q;
  auto& p = sh.p;
  float* run_max = sh.run_max;
  float* run_sum = sh.run_sum;
  float* corr = sh.corr;
  auto& partial_acc = sh.partial_acc;
  bool& last_block = sh.last_block;

  const int hd = job.head_dim, heads = job.heads_per_block, n_out = heads * hd;
  const int units_per_kv = attention_units_per_kv(job);
  const int kvh = unit / units_per_kv, first_q = kvh * (job.n_head / job.n_kv) + (unit % units_per_kv) * heads;
  const AttentionSpan span = attention_span(job, split, token);
  const int pos = span.pos, active = span.active, t0 = span.t0, t1 = span.t1;
  if (split >= active) return;
  const float* qkv = (const float*)job.qkv + (size_t)token * job.qkv_stride;

  // Queries of this unit's query heads, rotated.
  const float2* cs = (const float2*)job.rope + (size_t)pos * (job.n_rot / 2);
  const int half = hd / 2;
  for (int i = threadIdx.x; i < heads * half; i += AT_THREADS) {
    const int g = i / half, pr = i % half;
    int d0, d1;
    pair_dims(pr, job.n_rot, job.neox, &d0, &d1);
    const float* src = qkv + (size_t)(first_q + g) * hd;
    float a = __ldcg(src + d0), b = __ldcg(src + d1);
    if (pr < job.n_rot / 2) rotate(a, b, cs[pr]);
    q[g * hd + d0] = a;
    q[g * hd + d1] = b;
  }
  // Decode: every unit takes the new key and value from qkv; the KV head's
  // first unit also appends them to the cache.
  const bool has_new = job.append && t0 <= pos && pos < t1;
  if (has_new) store_kv(job, qkv, pos, kvh, 1, unit % units_per_kv == 0, sh.k_new, sh.v_new);
  if (threadIdx.x < heads) {
    run_max[threadIdx.x] = NEG_INF;
    run_sum[threadIdx.x] = 0.0f;
  }
  const size_t head_base = (size_t)kvh * job.capacity * hd;
  const uint16_t* k_cache = (const uint16_t*)job.k_cache + head_base;
  const uint16_t* v_cache = (const uint16_t*)job.v_cache + head_base;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // This lane's part of the value row of position t.
  auto value_row = [&](int t) -> VRaw<kDpl> {
    if (has_new && t == pos) return load_v<kDpl>(sh.v_new + kDpl * lane);
    return load_v<kDpl>(v_cache + (size_t)t * hd + kDpl * lane);
  };
  // Weighted values: warp w takes the tile's positions w, w + AT_WARPS, ...;
  // lane l holds head dimensions kDpl*l .. kDpl*l + kDpl - 1 of every query head.
  float acc[kHeads][kDpl];
#pragma unroll
  for (int g = 0; g < kHeads; ++g) {
#pragma unroll
    for (int j = 0; j < kDpl; ++j) acc[g][j] = 0.0f;
  }
  Sync::sync();
  chain_stamp(job.chain, (const LlmStepState*)job.state, LLM_STAMP_PREPARED);

  for (int tile = t0; tile < t1; tile += AT_THREADS) {
    // The first values this warp will weigh, requested before the scores (they
    // do not depend on them), so their latency hides behind the softmax.
    VRaw<kDpl> first[AT_V_BATCH];
#pragma unroll
    for (int u = 0; u < AT_V_BATCH; ++u) {
      const int i = u * AT_WARPS + warp;
      if (tile + i < t1) first[u] = value_row(tile + i);
    }
    // Scores: one position per thread, all query heads at once.
    const int t = tile + threadIdx.x;
    if (t < t1) {
      float sc[kHeads];
      if (has_new && t == pos) {
        key_scores<kHeads>(sc, sh.k_new, q, hd, heads);
      } else {
        key_scores<kHeads>(sc, k_cache + (size_t)t * hd, q, hd, heads);
      }
#pragma unroll
      for (int g = 0; g < kHeads; ++g) {
        if (g < heads) p[g][threadIdx.x] = sc[g] * job.scale;
      }
    } else {
      for (int g = 0; g < heads; ++g) p[g][threadIdx.x] = NEG_INF;
    }
    Sync::sync();
    // Online softmax update, one warp per query head.
    for (int g = warp; g < heads; g += AT_WARPS) {
      float m = NEG_INF;
      for (int i = lane; i < AT_THREADS; i += 32) m = fmaxf(m, p[g][i]);
      m = warp_max(m);
      const float m_new = fmaxf(run_max[g], m);
      float sum = 0.0f;
      for (int i = lane; i < AT_THREADS; i += 32) {
        const float e = expf(p[g][i] - m_new);
        p[g][i] = e;
        sum += e;
      }
      sum = warp_sum(sum);
      if (lane == 0) {
        const float c = expf(run_max[g] - m_new);
        corr[g] = c;
        run_sum[g] = run_sum[g] * c + sum;
        run_max[g] = m_new;
      }
    }
    Sync::sync();
#pragma unroll
    for (int g = 0; g < kHeads; ++g) {
#pragma unroll
      for (int j = 0; j < kDpl; ++j) acc[g][j] *= g < heads ? corr[g] : 1.0f;
    }
    const int n_here = min(AT_THREADS, t1 - tile);
    for (int b = 0; b * AT_WARPS * AT_V_BATCH < n_here; ++b) {
      VRaw<kDpl> raw[AT_V_BATCH];
      if (b == 0) {
#pragma unroll
        for (int u = 0; u < AT_V_BATCH; ++u) raw[u] = first[u];
      } else {
#pragma unroll
        for (int u = 0; u < AT_V_BATCH; ++u) {
          const int i = (b * AT_V_BATCH + u) * AT_WARPS + warp;
          if (i < n_here) raw[u] = value_row(tile + i);
        }
      }
#pragma unroll
      for (int u = 0; u < AT_V_BATCH; ++u) {
        const int i = (b * AT_V_BATCH + u) * AT_WARPS + warp;
        if (i >= n_here) continue;
        float v[kDpl];
#pragma unroll
        for (int j = 0; j < kDpl / 2; ++j) {
          v[2 * j] = half_to_float((uint16_t)(raw[u].w[j] & 0xffffu));
          v[2 * j + 1] = half_to_float((uint16_t)(raw[u].w[j] >> 16));
        }
#pragma unroll
        for (int g = 0; g < kHeads; ++g) {
          if (g < heads) {
            const float pg = p[g][i];
#pragma unroll
            for (int j = 0; j < kDpl; ++j) acc[g][j] += pg * v[j];
          }
        }
      }
    }
    Sync::sync();
  }

  // The warps' parts of each output, summed.
#pragma unroll
  for (int g = 0; g < kHeads; ++g) {
    if (g < heads) {
#pragma unroll
      for (int j = 0; j < kDpl; ++j) partial_acc[warp][g * hd + kDpl * lane + j] = acc[g][j];
    }
  }
  Sync::sync();
  float result[AT_OUT_PER_THREAD];
#pragma unroll
  for (int j = 0; j < AT_OUT_PER_THREAD; ++j) {
    const int o = threadIdx.x + AT_THREADS * j;
    result[j] = 0.0f;
    if (o < n_out) {
#pragma unroll
      for (int w = 0; w < AT_WARPS; ++w) result[j] += partial_acc[w][o];
    }
  }

  const size_t out_at = (size_t)token * job.out_stride + (size_t)first_q * hd;
  if (active == 1) {
#pragma unroll
    for (int j = 0; j < AT_OUT_PER_THREAD; ++j) {
      const int o = threadIdx.x + AT_THREADS * j;
      if (o >= n_out) continue;
      store_attention_out(job, out_at + o, result[j] / run_sum[o / hd]);
    }
    return;
  }
  // Leave this split's part, then let the last split of the unit merge them
  // (decode only: a prefill has one split per block).
  const int stride = n_out + 2 * heads;
  float* part = (float*)job.partial + ((size_t)unit * job.splits + split) * stride;
#pragma unroll
  for (int j = 0; j < AT_OUT_PER_THREAD; ++j) {
    const int o = threadIdx.x + AT_THREADS * j;
    if (o < n_out) part[o] = result[j];
  }
  if (threadIdx.x < heads) {
    part[n_out + 2 * threadIdx.x] = run_max[threadIdx.x];
    part[n_out + 2 * threadIdx.x + 1] = run_sum[threadIdx.x];
  }
  merge_attention_splits<AT_THREADS, Sync>(job, unit, active, heads, out_at, last_block);
}

// Units of an attention launch: heads_per_block query heads of one KV head each.
__device__ __forceinline__ int attention_units(const LlmAttentionJob& job) { return job.n_head / job.heads_per_block; }

// attention_block for the job's head size, units of up to kHeads query heads.
template <int kHeads, class Sync>
__device__ void attention_unit(const LlmAttentionJob& job, AttentionShared& sh, int unit, int split, int token) {
  switch (job.head_dim / 32) {
    case 2: attention_block<2, kHeads, Sync>(job, sh, unit, split, token); break;
    case 4: attention_block<4, kHeads, Sync>(job, sh, unit, split, token); break;
    default: attention_block<8, kHeads, Sync>(job, sh, unit, split, token); break;
  }
}
