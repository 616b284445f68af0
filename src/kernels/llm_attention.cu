// Decode attention (one new token per step) over an f16 KV cache, split over
// the cache's positions: block (kv_head, split) rotates the queries of the KV
// head's query heads, takes positions [t0, t1) of [0, pos] in tiles of
// LLM_ATTN_THREADS with an online softmax, and leaves (max, sum, weighted values);
// the last split of a head to finish merges them. The block whose range holds
// `pos` first appends the token's rotated key and its value to the cache.
#include "llm_jobs.cuh"

#define AT_THREADS LLM_ATTN_THREADS
#define AT_WARPS (AT_THREADS / 32)
#define AT_MAX_GQA LLM_ATTN_MAX_GQA
#define AT_MAX_ROT 256
#define AT_OUT_PER_THREAD (LLM_ATTN_MAX_OUT / AT_THREADS)
#define AT_MIN_CHUNK 64
#define AT_MAX_SPLITS LLM_ATTN_MAX_SPLITS
#define NEG_INF (-__int_as_float(0x7f800000))

// Rotates the pair (a, b) by (c, s) as the CPU does: a' = a c - b s, b' = a s + b c.
__device__ __forceinline__ void rotate(float& a, float& b, float c, float s) {
  float na = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
  float nb = __fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c));
  a = na;
  b = nb;
}

// The two dimensions of a head that pair `p` (0 <= p < head_dim / 2) rotates
// together; pairs past n_rot / 2 name dimensions RoPE leaves alone.
__device__ __forceinline__ void pair_dims(int p, int head_dim, int n_rot, int neox, int* d0, int* d1) {
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

extern "C" __global__ void __launch_bounds__(AT_THREADS) attention_decode(const LlmAttentionJob* job_ptr) {
  __shared__ LlmAttentionJob job;
  __shared__ float2 cs[AT_MAX_ROT / 2];
  __shared__ __align__(16) float q[LLM_ATTN_MAX_OUT];
  __shared__ float p[AT_MAX_GQA][AT_THREADS];
  __shared__ float run_max[AT_MAX_GQA], run_sum[AT_MAX_GQA], corr[AT_MAX_GQA];
  __shared__ bool last_block;
  if (threadIdx.x < sizeof(LlmAttentionJob) / 4) {
    ((uint32_t*)&job)[threadIdx.x] = ((const uint32_t*)job_ptr)[threadIdx.x];
  }
  __syncthreads();

  const int kvh = blockIdx.x, split = blockIdx.y;
  const int hd = job.head_dim, n_gqa = job.n_head / job.n_kv, n_out = n_gqa * hd;
  const int pos = ((const LlmStepState*)job.state)->pos;
  const int n_pos = pos + 1;
  // Splits in use: enough to give each at least AT_MIN_CHUNK positions (a short
  // context is one block per KV head, with no merge).
  const int active = min(job.splits, (n_pos + AT_MIN_CHUNK - 1) / AT_MIN_CHUNK);
  if (split >= active) return;
  const int chunk = (n_pos + active - 1) / active;
  const int t0 = split * chunk;
  const int t1 = min(n_pos, t0 + chunk);

  for (int i = threadIdx.x; i < job.n_rot / 2; i += AT_THREADS) {
    double theta = (double)pos * ((const double*)job.inv_freq)[i];
    cs[i] = make_float2((float)cos(theta), (float)sin(theta));
  }
  __syncthreads();

  const float* qkv = (const float*)job.qkv;
  const int half = hd / 2;
  for (int i = threadIdx.x; i < n_gqa * half; i += AT_THREADS) {
    const int g = i / half, pr = i % half;
    int d0, d1;
    pair_dims(pr, hd, job.n_rot, job.neox, &d0, &d1);
    const float* src = qkv + (size_t)(kvh * n_gqa + g) * hd;
    float a = src[d0], b = src[d1];
    if (pr < job.n_rot / 2) rotate(a, b, cs[pr].x, cs[pr].y);
    q[g * hd + d0] = a;
    q[g * hd + d1] = b;
  }
  const size_t head_base = (size_t)kvh * job.capacity * hd;
  uint16_t* k_cache = (uint16_t*)job.k_cache + head_base;
  uint16_t* v_cache = (uint16_t*)job.v_cache + head_base;
  if (t0 <= pos && pos < t1) {
    const float* k = qkv + (size_t)job.n_head * hd + (size_t)kvh * hd;
    const float* v = k + (size_t)job.n_kv * hd;
    for (int pr = threadIdx.x; pr < half; pr += AT_THREADS) {
      int d0, d1;
      pair_dims(pr, hd, job.n_rot, job.neox, &d0, &d1);
      float a = k[d0], b = k[d1];
      if (pr < job.n_rot / 2) rotate(a, b, cs[pr].x, cs[pr].y);
      k_cache[(size_t)pos * hd + d0] = float_to_half(a);
      k_cache[(size_t)pos * hd + d1] = float_to_half(b);
    }
    for (int d = threadIdx.x; d < hd; d += AT_THREADS) v_cache[(size_t)pos * hd + d] = float_to_half(v[d]);
  }
  if (threadIdx.x < n_gqa) {
    run_max[threadIdx.x] = NEG_INF;
    run_sum[threadIdx.x] = 0.0f;
  }
  float acc[AT_OUT_PER_THREAD];
#pragma unroll
  for (int j = 0; j < AT_OUT_PER_THREAD; ++j) acc[j] = 0.0f;
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int tile = t0; tile < t1; tile += AT_THREADS) {
    // Scores: one position per thread.
    const int t = tile + threadIdx.x;
    if (t < t1) {
      // Unrolled to AT_MAX_GQA so the sums stay in registers.
      float s[AT_MAX_GQA];
#pragma unroll
      for (int g = 0; g < AT_MAX_GQA; ++g) s[g] = 0.0f;
      const uint16_t* krow = k_cache + (size_t)t * hd;
      for (int d = 0; d < hd; d += 8) {
        uint4 w = *(const uint4*)(krow + d);
        const uint32_t u[4] = {w.x, w.y, w.z, w.w};
        float kf[8];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          kf[2 * i] = half_to_float((uint16_t)(u[i] & 0xffffu));
          kf[2 * i + 1] = half_to_float((uint16_t)(u[i] >> 16));
        }
#pragma unroll
        for (int g = 0; g < AT_MAX_GQA; ++g) {
          if (g < n_gqa) {
            const float* qg = q + g * hd + d;
#pragma unroll
            for (int i = 0; i < 8; ++i) s[g] += qg[i] * kf[i];
          }
        }
      }
#pragma unroll
      for (int g = 0; g < AT_MAX_GQA; ++g) {
        if (g < n_gqa) p[g][threadIdx.x] = s[g] * job.scale;
      }
    } else {
      for (int g = 0; g < n_gqa; ++g) p[g][threadIdx.x] = NEG_INF;
    }
    __syncthreads();
    // Online softmax update, one warp per query head.
    for (int g = warp; g < n_gqa; g += AT_WARPS) {
      float m = NEG_INF;
      for (int i = lane; i < AT_THREADS; i += 32) m = fmaxf(m, p[g][i]);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      const float m_new = fmaxf(run_max[g], m);
      float sum = 0.0f;
      for (int i = lane; i < AT_THREADS; i += 32) {
        float e = expf(p[g][i] - m_new);
        p[g][i] = e;
        sum += e;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      if (lane == 0) {
        const float c = expf(run_max[g] - m_new);
        corr[g] = c;
        run_sum[g] = run_sum[g] * c + sum;
        run_max[g] = m_new;
      }
    }
    __syncthreads();
    // Weighted values: thread owns outputs o = threadIdx.x + AT_THREADS * j.
    const int n_here = min(AT_THREADS, t1 - tile);
#pragma unroll
    for (int j = 0; j < AT_OUT_PER_THREAD; ++j) {
      const int o = threadIdx.x + AT_THREADS * j;
      if (o < n_out) {
        const int g = o / hd, d = o % hd;
        float a = acc[j] * corr[g];
        const uint16_t* vcol = v_cache + (size_t)tile * hd + d;
        for (int i = 0; i < n_here; ++i) a += p[g][i] * half_to_float(vcol[(size_t)i * hd]);
        acc[j] = a;
      }
    }
    __syncthreads();
  }

  float* out = (float*)job.out + (size_t)kvh * n_out;
  if (active == 1) {
#pragma unroll
    for (int j = 0; j < AT_OUT_PER_THREAD; ++j) {
      const int o = threadIdx.x + AT_THREADS * j;
      if (o < n_out) out[o] = acc[j] / run_sum[o / hd];
    }
    return;
  }
  // Leave this split's part, then let the last split of the head merge them.
  const int stride = n_out + 2 * n_gqa;
  float* part = (float*)job.partial + ((size_t)kvh * job.splits + split) * stride;
#pragma unroll
  for (int j = 0; j < AT_OUT_PER_THREAD; ++j) {
    const int o = threadIdx.x + AT_THREADS * j;
    if (o < n_out) part[o] = acc[j];
  }
  if (threadIdx.x < n_gqa) {
    part[n_out + 2 * threadIdx.x] = run_max[threadIdx.x];
    part[n_out + 2 * threadIdx.x + 1] = run_sum[threadIdx.x];
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* counter = (unsigned*)job.counters + kvh;
    last_block = atomicAdd(counter, 1u) == (unsigned)active - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  // The other splits' parts come from L2 (__ldcg): this SM's L1 may hold stale
  // lines of the same addresses from an earlier step.
  const float* parts = (const float*)job.partial + (size_t)kvh * job.splits * stride;
  for (int o = threadIdx.x; o < n_out; o += AT_THREADS) {
    const int g = o / hd;
    float ms[AT_MAX_SPLITS], ls[AT_MAX_SPLITS], as[AT_MAX_SPLITS];
    float m = NEG_INF;
#pragma unroll
    for (int s = 0; s < AT_MAX_SPLITS; ++s) {
      if (s < active) {
        const float* ps = parts + (size_t)s * stride;
        ms[s] = __ldcg(ps + n_out + 2 * g);
        ls[s] = __ldcg(ps + n_out + 2 * g + 1);
        as[s] = __ldcg(ps + o);
        m = fmaxf(m, ms[s]);
      }
    }
    float num = 0.0f, den = 0.0f;
#pragma unroll
    for (int s = 0; s < AT_MAX_SPLITS; ++s) {
      if (s < active) {
        const float w = expf(ms[s] - m);
        num += as[s] * w;
        den += ls[s] * w;
      }
    }
    out[o] = num / den;
  }
  if (threadIdx.x == 0) ((unsigned*)job.counters)[kvh] = 0;
}
