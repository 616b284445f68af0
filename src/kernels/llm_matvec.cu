// Matrix-vector products of LLM decode: one token's activations against the
// repacked weight matrices (llm_formats.cuh), streaming the weights once at close
// to memory bandwidth. Every block first builds the (normalized, quantized)
// activation vector in shared memory, then its warps take rows: a warp's lanes
// take consecutive 32-weight groups of a row, so each load instruction of the
// warp reads one contiguous run of an array.
//
// Kernels are named matvec_<activation>_<epilogue>:
//   activation  q8x32 | q8k | f16 | bf16 | f32 (what the weight formats pair with)
//   epilogue    store (y + bias) | add (out += y) | swiglu (silu(gate) * up) |
//               logits (store y, track the argmax in the step state)
#include "llm_jobs.cuh"

#define MV_THREADS 256
#define MV_WARPS (MV_THREADS / 32)

#define EPI_STORE 0
#define EPI_ADD 1
#define EPI_SWIGLU 2
#define EPI_LOGITS 3

// Weights are read once per token: keep them out of L1.
__device__ __forceinline__ uint4 load_stream16(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint2 load_stream8(const void* p) {
  uint2 v;
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}
__device__ __forceinline__ uint32_t load_stream4(const void* p) {
  uint32_t v;
  asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ uint32_t load_stream2(const void* p) {
  unsigned short v;
  asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

// Asks L2 for one row of a matrix (all its arrays), one 128-byte line per lane
// access, so the row is on its way while the block prepares the activations.
__device__ __forceinline__ void prefetch_row(const LlmGpuMatrix& m, int r) {
  const int lane = threadIdx.x & 31;
  const uint64_t arrays[4] = {m.qs, m.qh, m.scales, m.super};
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const uint64_t bytes = llm_row_bytes(m.format, m.cols, a);
    if (bytes == 0) continue;
    const char* p = (const char*)arrays[a] + (size_t)r * bytes;
    for (uint64_t off = (uint64_t)lane * 128; off < bytes; off += 32 * 128) {
      asm volatile("prefetch.global.L2 [%0];" ::"l"(p + off));
    }
  }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ int warp_sum_int(int v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// ---------------------------------------------------------------------------
// Activation preparation (the whole block).

// 1 / sqrt(mean(x^2) + eps), the sum of squares in double as on the CPU.
__device__ float block_rms_scale(const float* x, int n, float eps, double* red) {
  double ss = 0.0;
  for (int i = threadIdx.x; i < n; i += MV_THREADS) ss += (double)x[i] * (double)x[i];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  double total = 0.0;
#pragma unroll
  for (int w = 0; w < MV_WARPS; ++w) total += red[w];
  __syncthreads();
  return (float)(1.0 / sqrt(total / n + (double)eps));
}

struct ActView {
  const int8_t* q;      // int8 values (q8 kinds)
  const float* d;       // per group (q8x32) or per 256 (q8k)
  const float* s;       // q8x32: f16(d * sum)
  const int* sum;       // q8x32: per group sums; q8k: per 16 sums
  const uint16_t* h;    // f16 / bf16 values
  const float* f;       // f32 values
};

__device__ __forceinline__ float act_value(const float* x, const float* norm, float scale, int i) {
  return norm ? __fmul_rn(__fmul_rn(x[i], scale), norm[i]) : x[i];
}

// ggml's Q8_0/Q8_1: d = amax / 127, q = round(x / d); one warp per group.
__device__ void prep_q8x32(const float* x, const float* norm, float scale, int cols, uint8_t* smem,
                           ActView* v) {
  const int groups = cols / LLM_GROUP;
  int8_t* q = (int8_t*)smem;
  float* d = (float*)(smem + cols);
  float* s = d + groups;
  int* sum = (int*)(s + groups);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int g = warp; g < groups; g += MV_WARPS) {
    float val = act_value(x, norm, scale, g * LLM_GROUP + lane);
    float amax = warp_max(fabsf(val));
    float dd = amax / 127.0f;
    float id = dd != 0.0f ? 1.0f / dd : 0.0f;
    int qi = (int)roundf(__fmul_rn(val, id));
    q[g * LLM_GROUP + lane] = (int8_t)qi;
    int total = warp_sum_int(qi);
    if (lane == 0) {
      d[g] = half_to_float(float_to_half(dd));
      s[g] = half_to_float(float_to_half(__fmul_rn((float)total, dd)));
      sum[g] = total;
    }
  }
  v->q = q;
  v->d = d;
  v->s = s;
  v->sum = sum;
}

// ggml's Q8_K: per 256 the signed value of largest magnitude (first on ties)
// sets iscale = -127 / max; q = min(127, rint(iscale * x)); d = 1 / iscale; plus
// the sums of each 16. One warp per super-block; lane l holds elements l + 32j.
__device__ void prep_q8k(const float* x, const float* norm, float scale, int cols, uint8_t* smem,
                         ActView* v) {
  const int supers = cols / LLM_SUPER;
  int8_t* q = (int8_t*)smem;
  float* d = (float*)(smem + cols);
  int* bsum = (int*)(d + supers);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int sb = warp; sb < supers; sb += MV_WARPS) {
    const int base = sb * LLM_SUPER;
    float vals[8];
    float best = 0.0f, best_val = 0.0f;
    int best_idx = 0x7fffffff;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      vals[j] = act_value(x, norm, scale, base + lane + 32 * j);
      float a = fabsf(vals[j]);
      if (a > best) {
        best = a;
        best_val = vals[j];
        best_idx = lane + 32 * j;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      float ob = __shfl_xor_sync(0xffffffffu, best, o);
      float ov = __shfl_xor_sync(0xffffffffu, best_val, o);
      int oi = __shfl_xor_sync(0xffffffffu, best_idx, o);
      if (ob > best || (ob == best && oi < best_idx)) {
        best = ob;
        best_val = ov;
        best_idx = oi;
      }
    }
    if (best == 0.0f) {
#pragma unroll
      for (int j = 0; j < 8; ++j) q[base + lane + 32 * j] = 0;
      if (lane < 16) bsum[sb * 16 + lane] = 0;
      if (lane == 0) d[sb] = 0.0f;
      continue;
    }
    const float iscale = -127.0f / best_val;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      int qi = __float2int_rn(__fmul_rn(iscale, vals[j]));
      qi = qi < 127 ? qi : 127;
      q[base + lane + 32 * j] = (int8_t)qi;
      // Lanes 0-15 hold sub-block 2j, lanes 16-31 sub-block 2j + 1.
      int part = qi;
#pragma unroll
      for (int o = 8; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
      if ((lane & 15) == 0) bsum[sb * 16 + 2 * j + (lane >> 4)] = part;
    }
    if (lane == 0) d[sb] = 1.0f / iscale;
  }
  v->q = q;
  v->d = d;
  v->sum = bsum;
}

__device__ void prep_half(const float* x, const float* norm, float scale, int cols, uint8_t* smem,
                          ActView* v, bool bf16) {
  uint16_t* h = (uint16_t*)smem;
  for (int i = threadIdx.x; i < cols; i += MV_THREADS) {
    float val = act_value(x, norm, scale, i);
    h[i] = bf16 ? float_to_bf16(val) : float_to_half(val);
  }
  v->h = h;
}

__device__ void prep_f32(const float* x, const float* norm, float scale, int cols, uint8_t* smem,
                         ActView* v) {
  float* f = (float*)smem;
  for (int i = threadIdx.x; i < cols; i += MV_THREADS) f[i] = act_value(x, norm, scale, i);
  v->f = f;
}

// ---------------------------------------------------------------------------
// Row products. Each lane sums its groups; two groups are loaded before either
// is used so that every lane keeps two loads in flight.

__device__ __forceinline__ LlmActGroup act_group(const ActView& a, int g) {
  const uint4* p = (const uint4*)(a.q + g * LLM_GROUP);
  uint4 lo = p[0], hi = p[1];
  LlmActGroup r;
  r.x[0] = lo.x; r.x[1] = lo.y; r.x[2] = lo.z; r.x[3] = lo.w;
  r.x[4] = hi.x; r.x[5] = hi.y; r.x[6] = hi.z; r.x[7] = hi.w;
  return r;
}

__device__ __forceinline__ LlmQ8x32 act_q8x32(const ActView& a, int g) {
  LlmQ8x32 x;
  x.d = a.d[g];
  x.s = a.s[g];
  x.sum = a.sum[g];
  return x;
}

__device__ __forceinline__ LlmQ8K act_q8k(const ActView& a, int g) {
  LlmQ8K x;
  x.d = a.d[g / LLM_GROUPS_PER_SUPER];
  x.bsum_lo = a.sum[2 * g];
  x.bsum_hi = a.sum[2 * g + 1];
  return x;
}

struct Loaded {
  uint4 qs, qs2;
  uint2 qh;
  uint32_t sc, sup;
};

__device__ __forceinline__ Loaded load_group(const LlmGpuMatrix& m, size_t row_group, int format) {
  Loaded l;
  const uint8_t* qs = (const uint8_t*)m.qs;
  if (format == kGpuQ8_0) {
    l.qs = load_stream16(qs + row_group * 32);
    l.qs2 = load_stream16(qs + row_group * 32 + 16);
  } else {
    l.qs = load_stream16(qs + row_group * 16);
  }
  switch (format) {
    case kGpuQ5_0:
    case kGpuQ5_1:
    case kGpuQ5_K:
      l.qh.x = load_stream4((const uint8_t*)m.qh + row_group * 4);
      break;
    case kGpuQ6_K:
      l.qh = load_stream8((const uint8_t*)m.qh + row_group * 8);
      break;
    default:
      break;
  }
  switch (format) {
    case kGpuQ4_1:
    case kGpuQ5_1:
      l.sc = load_stream4((const uint8_t*)m.scales + row_group * 4);
      break;
    default:
      l.sc = load_stream2((const uint8_t*)m.scales + row_group * 2);
      break;
  }
  if (format == kGpuQ4_K || format == kGpuQ5_K) {
    l.sup = __ldg((const uint32_t*)m.super + row_group / LLM_GROUPS_PER_SUPER);
  } else if (format == kGpuQ6_K) {
    l.sup = __ldg((const uint16_t*)m.super + row_group / LLM_GROUPS_PER_SUPER);
  }
  return l;
}

template <int kFormat>
__device__ __forceinline__ float group_dot(const Loaded& l, const ActView& a, int g) {
  const uint32_t q[4] = {l.qs.x, l.qs.y, l.qs.z, l.qs.w};
  LlmActGroup ag = act_group(a, g);
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

// Groups a lane keeps in flight: its loads for all of them are issued before
// the first product.
#define MV_UNROLL 4

template <int kFormat>
__device__ float row_dot_quant(const LlmGpuMatrix& m, int r, const ActView& a) {
  const int groups = m.cols / LLM_GROUP;
  const size_t base = (size_t)r * groups;
  const int lane = threadIdx.x & 31;
  float acc = 0.0f;
  for (int g0 = lane; g0 < groups; g0 += 32 * MV_UNROLL) {
    Loaded l[MV_UNROLL];
#pragma unroll
    for (int u = 0; u < MV_UNROLL; ++u) {
      if (g0 + 32 * u < groups) l[u] = load_group(m, base + g0 + 32 * u, kFormat);
    }
#pragma unroll
    for (int u = 0; u < MV_UNROLL; ++u) {
      if (g0 + 32 * u < groups) acc += group_dot<kFormat>(l[u], a, g0 + 32 * u);
    }
  }
  return acc;
}

// F16/BF16/F32 rows: lane l takes 8 consecutive values of each 256.
__device__ __forceinline__ void unpack_half8(uint4 w, bool bf16, float* f) {
  const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (bf16) {
      f[2 * i] = bf16_to_float((uint16_t)(u[i] & 0xffffu));
      f[2 * i + 1] = bf16_to_float((uint16_t)(u[i] >> 16));
    } else {
      f[2 * i] = half_to_float((uint16_t)(u[i] & 0xffffu));
      f[2 * i + 1] = half_to_float((uint16_t)(u[i] >> 16));
    }
  }
}

__device__ float row_dot_half(const LlmGpuMatrix& m, int r, const ActView& a, bool bf16) {
  const uint16_t* row = (const uint16_t*)m.qs + (size_t)r * m.cols;
  const int lane = threadIdx.x & 31;
  float acc = 0.0f;
  for (int c0 = lane * 8; c0 < m.cols; c0 += 256 * MV_UNROLL) {
    uint4 w[MV_UNROLL];
#pragma unroll
    for (int u = 0; u < MV_UNROLL; ++u) {
      if (c0 + 256 * u < m.cols) w[u] = load_stream16(row + c0 + 256 * u);
    }
#pragma unroll
    for (int u = 0; u < MV_UNROLL; ++u) {
      if (c0 + 256 * u < m.cols) {
        float wf[8], x[8];
        unpack_half8(w[u], bf16, wf);
        unpack_half8(*(const uint4*)(a.h + c0 + 256 * u), bf16, x);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc += wf[i] * x[i];
      }
    }
  }
  return acc;
}

__device__ float row_dot_f32(const LlmGpuMatrix& m, int r, const ActView& a) {
  const float* row = (const float*)m.qs + (size_t)r * m.cols;
  const int lane = threadIdx.x & 31;
  float acc = 0.0f;
  for (int c = lane * 4; c < m.cols; c += 128) {
    uint4 w = load_stream16(row + c);
    float4 x = *(const float4*)(a.f + c);
    acc += __uint_as_float(w.x) * x.x + __uint_as_float(w.y) * x.y + __uint_as_float(w.z) * x.z +
           __uint_as_float(w.w) * x.w;
  }
  return acc;
}

template <int kAct>
__device__ float row_dot(const LlmGpuMatrix& m, int r, const ActView& a) {
  if (kAct == kActQ8x32) {
    switch (m.format) {
      case kGpuQ4_0: return row_dot_quant<kGpuQ4_0>(m, r, a);
      case kGpuQ4_1: return row_dot_quant<kGpuQ4_1>(m, r, a);
      case kGpuQ5_0: return row_dot_quant<kGpuQ5_0>(m, r, a);
      case kGpuQ5_1: return row_dot_quant<kGpuQ5_1>(m, r, a);
      default: return row_dot_quant<kGpuQ8_0>(m, r, a);
    }
  }
  if (kAct == kActQ8K) {
    switch (m.format) {
      case kGpuQ4_K: return row_dot_quant<kGpuQ4_K>(m, r, a);
      case kGpuQ5_K: return row_dot_quant<kGpuQ5_K>(m, r, a);
      default: return row_dot_quant<kGpuQ6_K>(m, r, a);
    }
  }
  if (kAct == kActF16) return row_dot_half(m, r, a, false);
  if (kAct == kActBF16) return row_dot_half(m, r, a, true);
  return row_dot_f32(m, r, a);
}

// ---------------------------------------------------------------------------

__device__ __forceinline__ unsigned long long argmax_key(float v, int row) {
  uint32_t u = __float_as_uint(v);
  uint32_t ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((unsigned long long)ordered << 32) | (unsigned long long)(0xffffffffu - (uint32_t)row);
}

template <int kAct, int kEpi>
__device__ void matvec(const LlmMatvecJob* job_ptr) {
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ LlmMatvecJob job;
  __shared__ double red[MV_WARPS];
  __shared__ unsigned long long best[MV_WARPS];
  if (threadIdx.x < sizeof(LlmMatvecJob) / 4) ((uint32_t*)&job)[threadIdx.x] = ((const uint32_t*)job_ptr)[threadIdx.x];
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  {
    const int row = blockIdx.x * MV_WARPS + warp;
    if (row < job.rows) {
      if (kEpi == EPI_SWIGLU) {
        prefetch_row(job.m[0], row);
        prefetch_row(job.m[1], row);
      } else {
        int seg = 0, r = row;
        while (seg + 1 < job.segments && r >= job.m[seg].rows) r -= job.m[seg++].rows;
        prefetch_row(job.m[seg], r);
      }
    }
  }
  const float* x = (const float*)job.in;
  const float* norm = (const float*)job.norm;
  float scale = 1.0f;
  if (norm) scale = block_rms_scale(x, job.cols, job.eps, red);
  ActView a;
  if (kAct == kActQ8x32) prep_q8x32(x, norm, scale, job.cols, smem, &a);
  if (kAct == kActQ8K) prep_q8k(x, norm, scale, job.cols, smem, &a);
  if (kAct == kActF16) prep_half(x, norm, scale, job.cols, smem, &a, false);
  if (kAct == kActBF16) prep_half(x, norm, scale, job.cols, smem, &a, true);
  if (kAct == kActF32) prep_f32(x, norm, scale, job.cols, smem, &a);
  __syncthreads();

  float* out = (float*)job.out;
  unsigned long long my_best = 0;
  for (int row = blockIdx.x * MV_WARPS + warp; row < job.rows; row += gridDim.x * MV_WARPS) {
    if (kEpi == EPI_SWIGLU) {
      float g = warp_sum(row_dot<kAct>(job.m[0], row, a));
      float u = warp_sum(row_dot<kAct>(job.m[1], row, a));
      if (lane == 0) out[row] = g / (1.0f + expf(-g)) * u;
      continue;
    }
    int seg = 0, r = row;
    while (seg + 1 < job.segments && r >= job.m[seg].rows) {
      r -= job.m[seg].rows;
      ++seg;
    }
    float y = warp_sum(row_dot<kAct>(job.m[seg], r, a));
    if (lane == 0) {
      if (kEpi == EPI_STORE) {
        const float* bias = (const float*)job.bias[seg];
        out[row] = bias ? y + bias[r] : y;
      } else if (kEpi == EPI_ADD) {
        out[row] += y;
      } else {
        out[row] = y;
        unsigned long long k = argmax_key(y, row);
        my_best = k > my_best ? k : my_best;
      }
    }
  }
  if (kEpi == EPI_LOGITS) {
    if (lane == 0) best[warp] = my_best;
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long b = 0;
      for (int w = 0; w < MV_WARPS; ++w) b = best[w] > b ? best[w] : b;
      atomicMax(&((LlmStepState*)job.state)->argmax, b);
    }
  }
}

#define MATVEC_KERNEL(act_name, act, epi_name, epi)                                      \
  extern "C" __global__ void __launch_bounds__(MV_THREADS)                                \
      matvec_##act_name##_##epi_name(const LlmMatvecJob* job) {                           \
    matvec<act, epi>(job);                                                                \
  }
#define MATVEC_KERNELS(act_name, act)                 \
  MATVEC_KERNEL(act_name, act, store, EPI_STORE)      \
  MATVEC_KERNEL(act_name, act, add, EPI_ADD)          \
  MATVEC_KERNEL(act_name, act, swiglu, EPI_SWIGLU)    \
  MATVEC_KERNEL(act_name, act, logits, EPI_LOGITS)

MATVEC_KERNELS(q8x32, kActQ8x32)
MATVEC_KERNELS(q8k, kActQ8K)
MATVEC_KERNELS(f16, kActF16)
MATVEC_KERNELS(bf16, kActBF16)
MATVEC_KERNELS(f32, kActF32)
