// Activation preparation for matrix-vector products, by a whole block: the
// input vector, RMS-normalized when asked, quantized into shared memory the way
// the CPU path quantizes it (llm_formats.cuh names the kinds).
#pragma once

#include "llm_cluster.cuh"
#include "llm_device.cuh"

// Where the prepared activations are in shared memory.
struct ActView {
  const int8_t* q;    // int8 values (q8 kinds)
  const float* d;     // per group (q8x32) or per 256 (q8k)
  const float* s;     // q8x32: f16(d * sum), Q8_1's s
  const int* sum;     // q8x32: per group sums; q8k: per 16 sums
  const uint16_t* h;  // f16 / bf16 values
  const float* f;     // f32 values
};

// The input vector is read through L2 (ld.global.cg): in the persistent decode
// step other SMs wrote it since this SM last read it, and L1 is not coherent.
__device__ __forceinline__ float4 load_input4(const float* p) { return __ldcg((const float4*)p); }

// The block's sum of every thread's `part` (all threads get it).
template <int kThreads, class Sync>
__device__ double block_sum(double part, double* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = part;
  Sync::sync();
  double total = 0.0;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) total += red[w];
  Sync::sync();
  return total;
}

// The sum of squares of four inputs, in double as on the CPU.
__device__ __forceinline__ double squares4(float4 v) {
  return (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z + (double)v.w * v.w;
}

// RMSNorm's 1 / sqrt(mean(x^2) + eps) from the sum of squares of n inputs
// (llm_formats.cuh). ACT_RMS_DOUBLE=1 takes it in double instead, as the CPU
// did before: for measurements only (the CPU's results then differ in the
// scale's last bit now and then).
#ifndef ACT_RMS_DOUBLE
#define ACT_RMS_DOUBLE 0
#endif
__device__ __forceinline__ float rms_scale(double sum_squares, int n, float eps) {
#if ACT_RMS_DOUBLE
  return (float)(1.0 / sqrt(sum_squares / n + (double)eps));
#else
  return llm_rms_scale(sum_squares, n, eps);
#endif
}

// Where a thread's values of pass p are: Q8_K takes a super-block of 256 a
// warp a pass (eight values a lane), the other kinds 128 values (four a lane).
// The blocks of a cluster take every kBlocks-th of these chunks (block `rank`
// from the rank-th), so that a short vector still spreads over every block.
template <int kThreads, class Share>
__device__ __forceinline__ int chunk_of(int pass, int rank) {
  return Share::kBlocks * ((threadIdx.x >> 5) + (kThreads / 32) * pass) + rank;
}
template <int kThreads, class Share>
__device__ __forceinline__ int quad_index(int pass, int rank) {
  return 128 * chunk_of<kThreads, Share>(pass, rank) + 4 * (threadIdx.x & 31);
}

template <int kThreads, class Sync, class Share>
__device__ float block_rms_scale(const float* x, int n, float eps, double* red, double* slots) {
  double ss = 0.0;
  // (A loop that breaks out instead made ptxas keep fewer loads in flight in
  // every kernel, 80 registers instead of 128.)
  for (int i = quad_index<kThreads, Share>(0, Share::rank()); i < n; i += kThreads * 4 * Share::kBlocks) {
    ss += squares4(load_input4(x + i));
  }
  Share::ready();
  return rms_scale(Share::total(block_sum<kThreads, Sync>(ss, red), slots), n, eps);
}

// Four inputs normalized as the CPU does: (x * scale) * w.
__device__ __forceinline__ float4 normalized4(float4 v, float4 w, float scale) {
  v.x = __fmul_rn(__fmul_rn(v.x, scale), w.x);
  v.y = __fmul_rn(__fmul_rn(v.y, scale), w.y);
  v.z = __fmul_rn(__fmul_rn(v.z, scale), w.z);
  v.w = __fmul_rn(__fmul_rn(v.w, scale), w.w);
  return v;
}

__device__ __forceinline__ uint32_t pack_i8x4(int a, int b, int c, int d) {
  return (uint32_t)(a & 0xff) | ((uint32_t)(b & 0xff) << 8) | ((uint32_t)(c & 0xff) << 16) | ((uint32_t)d << 24);
}

// Where each kind's arrays live in the block's shared memory (the products
// read them through the view; the preparation writes through it first).
__device__ __forceinline__ ActView q8x32_view(uint8_t* smem, int cols) {
  ActView v{};
  const int groups = cols / LLM_GROUP;
  v.q = (const int8_t*)smem;
  v.d = (const float*)(smem + cols);
  v.s = v.d + groups;
  v.sum = (const int*)(v.s + groups);
  return v;
}
__device__ __forceinline__ ActView q8k_view(uint8_t* smem, int cols) {
  ActView v{};
  v.q = (const int8_t*)smem;
  v.d = (const float*)(smem + cols);
  v.sum = (const int*)(smem + llm_q8k_sums_offset(cols));
  return v;
}

// ggml's Q8_0/Q8_1: per group of 32, d = amax / 127, q = round(x / d). Eight
// lanes share a group (four values each, from i), so a warp does four groups
// at once; every lane of the warp calls it, `here` for the lanes whose values
// exist (groups end on 8-lane boundaries: all or none of a group's lanes).
template <class Share>
__device__ __forceinline__ void q8x32_quad(float4 val, int i, bool here, const ActView& v) {
  const int lane = threadIdx.x & 31;
  float amax = fmaxf(fmaxf(fabsf(val.x), fabsf(val.y)), fmaxf(fabsf(val.z), fabsf(val.w)));
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float dd = amax / 127.0f;
  const float id = dd != 0.0f ? 1.0f / dd : 0.0f;
  const int q0 = (int)roundf(__fmul_rn(val.x, id)), q1 = (int)roundf(__fmul_rn(val.y, id));
  const int q2 = (int)roundf(__fmul_rn(val.z, id)), q3 = (int)roundf(__fmul_rn(val.w, id));
  int total = q0 + q1 + q2 + q3;
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
  if (!here) return;
  Share::put((uint32_t*)(v.q + i), pack_i8x4(q0, q1, q2, q3));
  if ((lane & 7) == 0) {
    const int g = i / LLM_GROUP;
    Share::put((float*)v.d + g, half_to_float(float_to_half(dd)));
    Share::put((float*)v.s + g, half_to_float(float_to_half(__fmul_rn((float)total, dd))));
    Share::put((int*)v.sum + g, total);
  }
}

// A part's first value of largest magnitude (Q8_K's scale follows it): the
// parts of a super-block are combined in index order, the later winning only
// when strictly larger.
struct Peak {
  uint32_t mag;  // |value| as bits (non-negative floats order as their bits)
  float value;
};
__device__ __forceinline__ Peak first_peak(Peak earlier, Peak later) { return later.mag > earlier.mag ? later : earlier; }
// The first peak of a warp's lanes (lane i: part i), in every lane.
__device__ __forceinline__ Peak warp_peak(Peak lane) {
  const uint32_t top = __reduce_max_sync(0xffffffffu, lane.mag);
  const int holder = __ffs(__ballot_sync(0xffffffffu, lane.mag == top)) - 1;
  return Peak{top, __shfl_sync(0xffffffffu, lane.value, holder)};
}
// Q8_K's value of x at iscale = -127 / max, as ggml's nearest_int takes it:
// the product rounded, plus 1.5 * 2^23, leaves rint(product) in the low
// mantissa bits; returned is the sum's bit pattern, whose low byte is the
// int8 value the CPU stores (its min(127, .) never applies: |iscale * x| <=
// 127 (1 + 2^-24) rounds to at most 127; and a scale of +-inf, from a peak
// below 127 / FLT_MAX, gives a low byte of 0 as on the CPU). An add runs at
// the FMA pipe's rate where a float-to-int conversion runs at 16 a clock an
// SM, and a preparation quantizes its whole input in every block (8B's down
// input: 7,168 values a block, two blocks an SM): on the H200 8B Q4_K_M and
// 1B Q6_K decoded 0.3-0.5% faster than with a conversion (docs/perf-notes.md).
__device__ __forceinline__ uint32_t q8k_biased(float iscale, float x) {
  return __float_as_uint(__fadd_rn(__fmul_rn(iscale, x), 12582912.0f));  // 1.5 * 2^23
}
// The int8 value itself (the low byte, sign-extended).
__device__ __forceinline__ int q8k_quantize(float iscale, float x) {
  return (int)(int8_t)(q8k_biased(iscale, x) & 0xffu);
}

// The peak of a warp's super-block where both signs reach its largest
// magnitude (`top`, as bits): the lowest lane holding it, and there its first
// such value (vals: lane i holds values 8 i .. 8 i + 7).
__device__ __forceinline__ float q8k_tied_peak(const float (&vals)[8], uint32_t top) {
  float first = 0.0f;
#pragma unroll
  for (int j = 7; j >= 0; --j) first = __float_as_uint(fabsf(vals[j])) == top ? vals[j] : first;
  const int holder = __ffs(__ballot_sync(0xffffffffu, first != 0.0f)) - 1;
  return __shfl_sync(0xffffffffu, first, holder);
}

// Q8_K's peak of a warp's super-block: its signed value of largest magnitude,
// the first (smallest index) among equals; 0 when every value is zero. Each
// lane takes the largest and smallest of its eight values, the warp the
// largest magnitude in one reduction, and two votes tell whether +top or -top
// is in the super-block: only where both are (rare) is the first one sought.
// (A pairwise tree of magnitudes and values in each lane, and the holder's
// value by a shuffle, took more instructions on the preparation's path.)
__device__ __forceinline__ float q8k_peak(const float (&vals)[8]) {
  float hi[4], lo[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    hi[j] = fmaxf(vals[2 * j], vals[2 * j + 1]);
    lo[j] = fminf(vals[2 * j], vals[2 * j + 1]);
  }
  const float lane_hi = fmaxf(fmaxf(hi[0], hi[1]), fmaxf(hi[2], hi[3]));
  const float lane_lo = fminf(fminf(lo[0], lo[1]), fminf(lo[2], lo[3]));
  // (fabsf makes -0 +0: an all-zero super-block has top 0.)
  const uint32_t top = __reduce_max_sync(0xffffffffu, __float_as_uint(fmaxf(fabsf(lane_hi), fabsf(lane_lo))));
  if (top == 0) return 0.0f;
  const float t = __uint_as_float(top);
  const uint32_t pos = __ballot_sync(0xffffffffu, lane_hi == t);
  const uint32_t neg = __ballot_sync(0xffffffffu, lane_lo == -t);
  if (neg == 0) return t;
  if (pos == 0) return -t;
  return q8k_tied_peak(vals, top);
}

// ggml's Q8_K: per 256, the signed value of largest magnitude (the first on
// ties) sets iscale = -127 / max; q = min(127, nearest_int(iscale * x)); d =
// 1 / iscale; plus the sums of each 16. One warp per super-block (every lane
// calls it), eight values per lane: vals are values 8 lane .. 8 lane + 7 of
// super-block sb.
template <class Share>
__device__ __forceinline__ void q8k_super(const float (&vals)[8], int sb, const ActView& v) {
  const int lane = threadIdx.x & 31;
  const int i = sb * LLM_SUPER + 8 * lane;
  int8_t* q = (int8_t*)v.q;
  float* d = (float*)v.d;
  int* bsum = (int*)v.sum;
  const float peak = q8k_peak(vals);
  if (peak == 0.0f) {  // all zero
    Share::put((uint2*)(q + i), make_uint2(0, 0));
    if ((lane & 1) == 0) Share::put(bsum + sb * 16 + lane / 2, 0);
    if (lane == 0) Share::put(d + sb, 0.0f);
    return;
  }
  const float iscale = -127.0f / peak;
  uint32_t b[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) b[j] = q8k_biased(iscale, vals[j]);
  // The low bytes, packed, are the int8 values; a dp4a against ones sums them.
  const uint2 packed = make_uint2(pack_i8x4((int)b[0], (int)b[1], (int)b[2], (int)b[3]),
                                  pack_i8x4((int)b[4], (int)b[5], (int)b[6], (int)b[7]));
  Share::put((uint2*)(q + i), packed);
  int part = llm_dp4a(packed.y, 0x01010101u, llm_dp4a(packed.x, 0x01010101u, 0));
  // A sub-block of 16 is two lanes.
  part += __shfl_xor_sync(0xffffffffu, part, 1);
  if ((lane & 1) == 0) Share::put(bsum + sb * 16 + lane / 2, part);
  if (lane == 0) Share::put(d + sb, 1.0f / iscale);
}

// (Four values, one 8-byte store.)
template <class Share>
__device__ __forceinline__ void half_quad(float4 val, int i, uint16_t* h, bool bf16) {
  const float f[4] = {val.x, val.y, val.z, val.w};
  uint32_t b[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) b[j] = bf16 ? float_to_bf16(f[j]) : float_to_half(f[j]);
  Share::put((uint2*)(h + i), make_uint2(b[0] | (b[1] << 16), b[2] | (b[3] << 16)));
}

// The kinds from the input in global memory, pass after pass: a thread asks
// for the inputs of its next passes before it works on one (a window of
// kAhead passes' loads). Measured on the H200 (docs/perf-notes.md), Q8_K
// decoded fastest with the next pass's loads only, Q8_0 with four passes'.
#ifndef MV_PREP_AHEAD_Q8K
#define MV_PREP_AHEAD_Q8K 1
#endif
#ifndef MV_PREP_AHEAD
#define MV_PREP_AHEAD 4
#endif

// Loads of kAhead passes of kLoads float4 each from x: pass p of a thread at
// first + p * stride (+ 4 per further load), while it is < end.
template <int kLoads, int kAhead>
struct InputWindow {
  static_assert(kAhead >= 1, "at least the next pass");
  float4 v[kAhead][kLoads];

  __device__ __forceinline__ void load(const float* x, int p, int i, int end) {
#pragma unroll
    for (int k = 0; k < kLoads; ++k) v[p][k] = i < end ? load_input4(x + i + 4 * k) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  __device__ __forceinline__ void fill(const float* x, int first, int stride, int end) {
#pragma unroll
    for (int p = 0; p < kAhead; ++p) load(x, p, first + p * stride, end);
  }
  // Takes the oldest pass's values (the pass at i) and asks for the pass
  // kAhead strides further on.
  __device__ __forceinline__ void advance(const float* x, int i, int stride, int end, float4 (&out)[kLoads]) {
#pragma unroll
    for (int k = 0; k < kLoads; ++k) out[k] = v[0][k];
#pragma unroll
    for (int p = 0; p + 1 < kAhead; ++p) {
#pragma unroll
      for (int k = 0; k < kLoads; ++k) v[p][k] = v[p + 1][k];
    }
    load(x, kAhead - 1, i + kAhead * stride, end);
  }
};

// Inputs from a window, normalized when there is a norm.
__device__ __forceinline__ float4 act_from(float4 v, const float* norm, float scale, int i) {
  return norm ? normalized4(v, *(const float4*)(norm + i), scale) : v;
}

// (Share::ready: where block_rms_scale has not waited already.)
template <int kThreads, class Share>
__device__ void prep_q8x32(const float* x, const float* norm, float scale, int cols, uint8_t* smem, ActView* v) {
  *v = q8x32_view(smem, cols);
  const int lane = threadIdx.x & 31;
  constexpr int kStride = kThreads * 4 * Share::kBlocks;
  const int first = 128 * chunk_of<kThreads, Share>(0, Share::rank());
  InputWindow<1, MV_PREP_AHEAD> window;
  window.fill(x, first + 4 * lane, kStride, cols);
  if (!norm) Share::ready();
  for (int base = first; base < cols; base += kStride) {
    const int i = base + 4 * lane;
    const bool here = i < cols;
    float4 raw[1];
    window.advance(x, i, kStride, cols, raw);
    q8x32_quad<Share>(here ? act_from(raw[0], norm, scale, i) : make_float4(0.f, 0.f, 0.f, 0.f), i, here, *v);
  }
}

template <int kThreads, class Share>
__device__ void prep_q8k(const float* x, const float* norm, float scale, int cols, uint8_t* smem, ActView* v) {
  *v = q8k_view(smem, cols);
  const int lane = threadIdx.x & 31;
  constexpr int kSbStride = kThreads / 32 * Share::kBlocks;
  const int first = chunk_of<kThreads, Share>(0, Share::rank());
  InputWindow<2, MV_PREP_AHEAD_Q8K> window;
  window.fill(x, first * LLM_SUPER + 8 * lane, kSbStride * LLM_SUPER, cols);
  if (!norm) Share::ready();
  for (int sb = first; sb < cols / LLM_SUPER; sb += kSbStride) {
    const int i = sb * LLM_SUPER + 8 * lane;
    float4 raw[2];
    window.advance(x, i, kSbStride * LLM_SUPER, cols, raw);
    const float4 a = act_from(raw[0], norm, scale, i), b = act_from(raw[1], norm, scale, i + 4);
    const float vals[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    q8k_super<Share>(vals, sb, *v);
  }
}

// (The 16-bit and f32 kinds have no arithmetic to hide a load behind: with a
// window of four passes 1B F16 decoded 0.5% slower than with these loops.)
template <int kThreads, class Share>
__device__ void prep_half(const float* x, const float* norm, float scale, int cols, uint8_t* smem, ActView* v,
                          bool bf16) {
  uint16_t* h = (uint16_t*)smem;
  if (!norm) Share::ready();
  for (int i = quad_index<kThreads, Share>(0, Share::rank()); i < cols; i += kThreads * 4 * Share::kBlocks) {
    half_quad<Share>(act_from(load_input4(x + i), norm, scale, i), i, h, bf16);
  }
  v->h = h;
}

template <int kThreads, class Share>
__device__ void prep_f32(const float* x, const float* norm, float scale, int cols, uint8_t* smem, ActView* v) {
  float* f = (float*)smem;
  if (!norm) Share::ready();
  for (int i = quad_index<kThreads, Share>(0, Share::rank()); i < cols; i += kThreads * 4 * Share::kBlocks) {
    Share::put((float4*)(f + i), act_from(load_input4(x + i), norm, scale, i));
  }
  v->f = f;
}

// A normalized input of up to ACT_HELD_VECS * 4 * kThreads values (the
// residual stream ahead of every RMSNorm) is loaded once: each thread keeps
// its values and their norm weights in registers from the sum of squares to
// the quantization, instead of reading the input from L2 a second time after
// the block's reduction. Thread order: value k of a thread is the one its
// kind's pass k would take (Q8_K: two per super-block of its warp).
#ifndef ACT_HELD_VECS
#define ACT_HELD_VECS 4
#endif
static_assert(ACT_HELD_VECS % 2 == 0, "Q8_K holds a super-block's two loads a lane together");
template <int kAct, int kThreads, class Share>
__device__ __forceinline__ int held_index(int k, int rank) {
  if (kAct == kActQ8K) {
    return chunk_of<kThreads, Share>(k >> 1, rank) * LLM_SUPER + 8 * (threadIdx.x & 31) + 4 * (k & 1);
  }
  return quad_index<kThreads, Share>(k, rank);
}

// What a preparation does once its input loads are out (and before it waits
// for them): by default nothing.
struct NoPrepHook {
  __device__ __forceinline__ void operator()() const {}
};

template <int kAct, int kThreads, class Sync, class Share, class Hook>
__device__ ActView prepare_held(const float* x, const float* norm, float eps, int cols, uint8_t* smem, double* red,
                                double* slots, const Hook& hook) {
  float4 val[ACT_HELD_VECS], w[ACT_HELD_VECS];
  double ss = 0.0;
  const int rank = Share::rank();
#pragma unroll
  for (int k = 0; k < ACT_HELD_VECS; ++k) {
    const int i = held_index<kAct, kThreads, Share>(k, rank);
    val[k] = w[k] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (i < cols) {
      val[k] = load_input4(x + i);
      w[k] = *(const float4*)(norm + i);
    }
  }
  hook();
  Share::ready();
  // Summed in k order, as the loads came (the order only changes the double's last bits).
#pragma unroll
  for (int k = 0; k < ACT_HELD_VECS; ++k) ss += squares4(val[k]);
  const float scale = rms_scale(Share::total(block_sum<kThreads, Sync>(ss, red), slots), cols, eps);
#pragma unroll
  for (int k = 0; k < ACT_HELD_VECS; ++k) val[k] = normalized4(val[k], w[k], scale);

  ActView a{};
  const int lane = threadIdx.x & 31;
  if (kAct == kActQ8K) {
    a = q8k_view(smem, cols);
#pragma unroll
    for (int k = 0; k < ACT_HELD_VECS; k += 2) {
      const int sb = held_index<kAct, kThreads, Share>(k, rank) / LLM_SUPER;  // the same for the warp's lanes
      if (sb >= cols / LLM_SUPER) break;
      const float vals[8] = {val[k].x,     val[k].y,     val[k].z,     val[k].w,
                             val[k + 1].x, val[k + 1].y, val[k + 1].z, val[k + 1].w};
      q8k_super<Share>(vals, sb, a);
    }
  } else if (kAct == kActQ8x32) {
    a = q8x32_view(smem, cols);
#pragma unroll
    for (int k = 0; k < ACT_HELD_VECS; ++k) {
      const int i = held_index<kAct, kThreads, Share>(k, rank);
      if (i - 4 * lane >= cols) break;  // the warp's first value: the warp takes part or leaves
      q8x32_quad<Share>(val[k], i, i < cols, a);
    }
  } else if (kAct == kActF16 || kAct == kActBF16) {
    a.h = (const uint16_t*)smem;
#pragma unroll
    for (int k = 0; k < ACT_HELD_VECS; ++k) {
      const int i = held_index<kAct, kThreads, Share>(k, rank);
      if (i < cols) half_quad<Share>(val[k], i, (uint16_t*)smem, kAct == kActBF16);
    }
  } else {
    a.f = (const float*)smem;
#pragma unroll
    for (int k = 0; k < ACT_HELD_VECS; ++k) {
      const int i = held_index<kAct, kThreads, Share>(k, rank);
      if (i < cols) Share::put((float4*)(smem + 4 * i), val[k]);
    }
  }
  return a;
}

// The block's activations of kind kAct in shared memory (callers sync after).
// Share = ActShare<n>, n > 1: the blocks of the launch's clusters of n prepare
// it together (llm_cluster.cuh), and each block holds all of it on return.
// kMayNorm false: the input has no norm (`norm` is not read), and the caller
// carries none of the normalizing code.
template <int kAct, int kThreads, class Sync = CtaSync, class Share = ActShare<1>, class Hook = NoPrepHook,
          bool kMayNorm = true>
__device__ ActView prepare_activations(const float* x, const float* norm, float eps, int cols, uint8_t* smem,
                                       double* red, const Hook& hook = Hook{}) {
  if constexpr (!kMayNorm) norm = nullptr;
  double* slots = nullptr;
  if constexpr (Share::kBlocks > 1) {
    __shared__ double cluster_slots[Share::kBlocks];
    slots = cluster_slots;
  }
  Share::started();
  ActView a{};
  if (norm && cols <= ACT_HELD_VECS * 4 * kThreads) {
    a = prepare_held<kAct, kThreads, Sync, Share>(x, norm, eps, cols, smem, red, slots, hook);
  } else {
    // (Here the hook runs before the input's loads. The products that pass
    // one, the 16-bit gate/up, have a norm, and LLaMA's normalized inputs are
    // short enough for prepare_held.)
    hook();
    const float scale = norm ? block_rms_scale<kThreads, Sync, Share>(x, cols, eps, red, slots) : 1.0f;
    if (kAct == kActQ8x32) prep_q8x32<kThreads, Share>(x, norm, scale, cols, smem, &a);
    if (kAct == kActQ8K) prep_q8k<kThreads, Share>(x, norm, scale, cols, smem, &a);
    if (kAct == kActF16) prep_half<kThreads, Share>(x, norm, scale, cols, smem, &a, false);
    if (kAct == kActBF16) prep_half<kThreads, Share>(x, norm, scale, cols, smem, &a, true);
    if (kAct == kActF32) prep_f32<kThreads, Share>(x, norm, scale, cols, smem, &a);
  }
  Share::finish();
  return a;
}
