// Matrix-vector products of LLM decode: one token's activations against the
// repacked weight matrices (llm_formats.cuh), streaming the weights once. Every
// block first builds the (normalized, quantized) activation vector in shared
// memory (llm_act_prep.cuh) while the L2 fetches its first rows; then each warp
// takes rows_per_warp rows at a time, its lanes taking consecutive 32-weight
// groups, so that each load instruction of a warp reads one contiguous run and
// every lane has about eight groups of loads in flight before it computes.
//
// Kernels are named matvec_<activation>_<epilogue>:
//   activation  q8x32 | q8k | f16 | bf16 | f32 (what the weight formats pair with)
//   epilogue    store (y + bias) | add (out += y) | swiglu (silu(gate) * up) |
//               logits (store y, track the argmax in the step state)
#include "llm_act_prep.cuh"
#include "llm_jobs.cuh"

#define MV_THREADS 256
#define MV_WARPS (MV_THREADS / 32)
// Group loads a lane issues before its first product.
#define MV_IN_FLIGHT 8

#define EPI_STORE 0
#define EPI_ADD 1
#define EPI_SWIGLU 2
#define EPI_LOGITS 3

// ---------------------------------------------------------------------------
// One group of a quantized row: load, then product with the activations.

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
  if (format == kGpuQ5_0 || format == kGpuQ5_1 || format == kGpuQ5_K) {
    l.qh.x = load_stream4((const uint8_t*)m.qh + row_group * 4);
  } else if (format == kGpuQ6_K) {
    l.qh = load_stream8((const uint8_t*)m.qh + row_group * 8);
  }
  if (format == kGpuQ4_1 || format == kGpuQ5_1) {
    l.sc = load_stream4((const uint8_t*)m.scales + row_group * 4);
  } else {
    l.sc = load_stream2((const uint8_t*)m.scales + row_group * 2);
  }
  if (format == kGpuQ4_K || format == kGpuQ5_K) {
    l.sup = __ldg((const uint32_t*)m.super + row_group / LLM_GROUPS_PER_SUPER);
  } else if (format == kGpuQ6_K) {
    l.sup = __ldg((const uint16_t*)m.super + row_group / LLM_GROUPS_PER_SUPER);
  }
  return l;
}

__device__ __forceinline__ LlmActGroup act_group(const ActView& a, int g) {
  const uint4* p = (const uint4*)(a.q + g * LLM_GROUP);
  const uint4 lo = p[0], hi = p[1];
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

// Rows r0 .. r0 + R - 1 of a quantized matrix: this lane's partial sums.
template <int kFormat, int R>
__device__ void rows_quant(const LlmGpuMatrix& m, int r0, const ActView& a, float* acc) {
  constexpr int kU = MV_IN_FLIGHT / R;  // groups per row per round
  const int groups = m.cols / LLM_GROUP;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int g0 = lane; g0 < groups; g0 += 32 * kU) {
    Loaded l[R][kU];
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        if (g0 + 32 * u < groups) l[r][u] = load_group(m, (size_t)(r0 + r) * groups + g0 + 32 * u, kFormat);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        if (g0 + 32 * u < groups) acc[r] += group_dot<kFormat>(l[r][u], a, g0 + 32 * u);
      }
    }
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

// F16/BF16/F32 rows: lane l takes 16 bytes of each 512 (F32: 4 values of 128).
template <int kAct, int R>
__device__ void rows_plain(const LlmGpuMatrix& m, int r0, const ActView& a, float* acc) {
  constexpr int kU = MV_IN_FLIGHT / R;
  constexpr int kPer = kAct == kActF32 ? 4 : 8;  // values per 16 bytes
  const int lane = threadIdx.x & 31;
  const int cols = m.cols;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int c0 = lane * kPer; c0 < cols; c0 += 32 * kPer * kU) {
    uint4 w[R][kU];
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int c = c0 + 32 * kPer * u;
        if (c < cols) w[r][u] = load_stream16((const uint8_t*)m.qs + ((size_t)(r0 + r) * cols + c) * (16 / kPer));
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int c = c0 + 32 * kPer * u;
      if (c >= cols) continue;
      float x[8];
      if (kAct == kActF32) {
        const float4 v = *(const float4*)(a.f + c);
        x[0] = v.x; x[1] = v.y; x[2] = v.z; x[3] = v.w;
      } else {
        unpack_half8(*(const uint4*)(a.h + c), kAct == kActBF16, x);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (kAct == kActF32) {
          acc[r] += __uint_as_float(w[r][u].x) * x[0] + __uint_as_float(w[r][u].y) * x[1] +
                    __uint_as_float(w[r][u].z) * x[2] + __uint_as_float(w[r][u].w) * x[3];
        } else {
          float wf[8];
          unpack_half8(w[r][u], kAct == kActBF16, wf);
#pragma unroll
          for (int i = 0; i < 8; ++i) acc[r] += wf[i] * x[i];
        }
      }
    }
  }
}

// The R rows' full products, in every lane.
template <int kAct, int R>
__device__ void rows_dot(const LlmGpuMatrix& m, int r0, const ActView& a, float* y) {
  if (kAct == kActQ8x32) {
    switch (m.format) {
      case kGpuQ4_0: rows_quant<kGpuQ4_0, R>(m, r0, a, y); break;
      case kGpuQ4_1: rows_quant<kGpuQ4_1, R>(m, r0, a, y); break;
      case kGpuQ5_0: rows_quant<kGpuQ5_0, R>(m, r0, a, y); break;
      case kGpuQ5_1: rows_quant<kGpuQ5_1, R>(m, r0, a, y); break;
      default: rows_quant<kGpuQ8_0, R>(m, r0, a, y); break;
    }
  } else if (kAct == kActQ8K) {
    switch (m.format) {
      case kGpuQ4_K: rows_quant<kGpuQ4_K, R>(m, r0, a, y); break;
      case kGpuQ5_K: rows_quant<kGpuQ5_K, R>(m, r0, a, y); break;
      default: rows_quant<kGpuQ6_K, R>(m, r0, a, y); break;
    }
  } else {
    rows_plain<kAct, R>(m, r0, a, y);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) y[r] = warp_sum(y[r]);
}

// ---------------------------------------------------------------------------

__device__ __forceinline__ unsigned long long argmax_key(float v, int row) {
  const uint32_t u = __float_as_uint(v);
  const uint32_t ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((unsigned long long)ordered << 32) | (unsigned long long)(0xffffffffu - (uint32_t)row);
}

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

template <int kAct, int kEpi, int R>
__device__ void rows_loop(const LlmMatvecJob& job, const ActView& a, unsigned long long* best) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* out = (float*)job.out;
  const int tasks = job.rows / R;
  for (int task = blockIdx.x * MV_WARPS + warp; task < tasks; task += gridDim.x * MV_WARPS) {
    const int row0 = task * R;
    float y[R];
    if (kEpi == EPI_SWIGLU) {
      float u[R];
      rows_dot<kAct, R>(job.m[0], row0, a, y);
      rows_dot<kAct, R>(job.m[1], row0, a, u);
      if (lane < R) {
        float g = y[0], v = u[0];
#pragma unroll
        for (int r = 1; r < R; ++r) {
          if (lane == r) { g = y[r]; v = u[r]; }
        }
        out[row0 + lane] = g / (1.0f + expf(-g)) * v;
      }
      continue;
    }
    int r;
    const int seg = segment_of(job, row0, &r);
    rows_dot<kAct, R>(segment_matrix(job, seg), r, a, y);
    if (lane < R) {
      float v = y[0];
#pragma unroll
      for (int i = 1; i < R; ++i) v = lane == i ? y[i] : v;
      const int row = row0 + lane;
      if (kEpi == EPI_STORE) {
        const float* bias = (const float*)(seg == 0 ? job.bias[0] : seg == 1 ? job.bias[1] : job.bias[2]);
        out[row] = bias ? v + bias[r + lane] : v;
      } else if (kEpi == EPI_ADD) {
        out[row] += v;
      } else {
        out[row] = v;
        const unsigned long long k = argmax_key(v, row);
        *best = k > *best ? k : *best;
      }
    }
  }
}

template <int kAct, int kEpi>
__device__ void matvec(const LlmMatvecJob& job) {
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ double red[MV_WARPS];
  __shared__ unsigned long long block_best[MV_WARPS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int R = job.rows_per_warp;

  // The first rows of this warp start on their way to L2 before the prep.
  {
    const int row0 = (blockIdx.x * MV_WARPS + warp) * R;
    if (row0 < job.rows) {
      if (kEpi == EPI_SWIGLU) {
        prefetch_rows(job.m[0], row0, R);
        prefetch_rows(job.m[1], row0, R);
      } else {
        int r;
        prefetch_rows(segment_matrix(job, segment_of(job, row0, &r)), r, R);
      }
    }
  }
  const ActView a = prepare_activations<kAct, MV_THREADS>((const float*)job.in, (const float*)job.norm,
                                                         job.eps, job.cols, smem, red);
  __syncthreads();

  unsigned long long best = 0;
  if (R == 4) {
    rows_loop<kAct, kEpi, 4>(job, a, &best);
  } else if (R == 2) {
    rows_loop<kAct, kEpi, 2>(job, a, &best);
  } else {
    rows_loop<kAct, kEpi, 1>(job, a, &best);
  }

  if (kEpi == EPI_LOGITS) {
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
}

#define MATVEC_KERNEL(act_name, act, epi_name, epi)                                              \
  extern "C" __global__ void __launch_bounds__(MV_THREADS, 2)                                     \
      matvec_##act_name##_##epi_name(const __grid_constant__ LlmMatvecJob job) {                  \
    matvec<act, epi>(job);                                                                        \
  }
#define MATVEC_KERNELS(act_name, act)              \
  MATVEC_KERNEL(act_name, act, store, EPI_STORE)   \
  MATVEC_KERNEL(act_name, act, add, EPI_ADD)       \
  MATVEC_KERNEL(act_name, act, swiglu, EPI_SWIGLU) \
  MATVEC_KERNEL(act_name, act, logits, EPI_LOGITS)

MATVEC_KERNELS(q8x32, kActQ8x32)
MATVEC_KERNELS(q8k, kActQ8K)
MATVEC_KERNELS(f16, kActF16)
MATVEC_KERNELS(bf16, kActBF16)
MATVEC_KERNELS(f32, kActF32)
