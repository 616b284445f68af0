// Elementwise kernels over contiguous f32 and f16 arrays: add, mul (two inputs),
// exp, relu (one input), and a row-wise bias + optional relu (the MLP's layer
// epilogue). f16 values are computed in f32 and rounded once.
//
// The bulk moves in 16-byte vectors (4 floats or 8 halves) with two vectors per
// thread in flight, through a grid-stride loop: a grid of a few CTAs per SM reads
// any length at full bandwidth. Misaligned pointers fall back to single elements;
// the last n % vector elements are done singly either way.
//   ew_<add|mul>_<f32|f16>(out, a, b, n)   ew_<exp|relu>_<f32|f16>(out, a, n)
//   bias_act_<f32|f16>(y, bias, rows, cols, relu)   y[r][c] = act(y[r][c] + bias[c])
#include "gemm_prims.cuh"

namespace elementwise {

struct Add {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct Mul {
  __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};
struct Exp {
  __device__ __forceinline__ float operator()(float a, float) const { return expf(a); }
};
struct Relu {
  // NaN stays NaN (NaN < 0 is false).
  __device__ __forceinline__ float operator()(float a, float) const { return a < 0.0f ? 0.0f : a; }
};

// Applies op to each lane of 16-byte vectors (4 floats or 8 halves).
template <bool kHalf, int kInputs, class Op>
__device__ __forceinline__ uint4 apply_vector(const uint4& a, const uint4& b, Op op) {
  const uint32_t wa[4] = {a.x, a.y, a.z, a.w};
  const uint32_t wb[4] = {b.x, b.y, b.z, b.w};
  uint32_t w[4];
  NVHCQ_UNROLL
  for (int j = 0; j < 4; ++j) {
    if constexpr (kHalf) {
      float lo = op(half_to_float((uint16_t)(wa[j] & 0xffffu)),
                    kInputs == 2 ? half_to_float((uint16_t)(wb[j] & 0xffffu)) : 0.0f);
      float hi = op(half_to_float((uint16_t)(wa[j] >> 16)),
                    kInputs == 2 ? half_to_float((uint16_t)(wb[j] >> 16)) : 0.0f);
      w[j] = (uint32_t)float_to_half(lo) | ((uint32_t)float_to_half(hi) << 16);
    } else {
      w[j] =
          __float_as_uint(op(__uint_as_float(wa[j]), kInputs == 2 ? __uint_as_float(wb[j]) : 0.0f));
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <bool kHalf>
__device__ __forceinline__ float load_one(const void* p, uint64_t i) {
  if constexpr (kHalf) {
    return half_to_float(((const uint16_t*)p)[i]);
  } else {
    return ((const float*)p)[i];
  }
}
template <bool kHalf>
__device__ __forceinline__ void store_one(void* p, uint64_t i, float v) {
  if constexpr (kHalf) {
    ((uint16_t*)p)[i] = float_to_half(v);
  } else {
    ((float*)p)[i] = v;
  }
}

template <bool kHalf, int kInputs, class Op>
__device__ __forceinline__ void map(void* out, const void* a, const void* b, uint64_t n) {
  constexpr uint64_t kPerVector = kHalf ? 8 : 4;
  const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  uint64_t bits = (uint64_t)out | (uint64_t)a | (kInputs == 2 ? (uint64_t)b : 0);
  uint64_t done = 0;
  Op op;
  if ((bits & 15) == 0) {
    const uint4* va = (const uint4*)a;
    const uint4* vb = (const uint4*)b;
    uint4* vo = (uint4*)out;
    const uint64_t vectors = n / kPerVector;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    uint64_t i = tid;
    // Two vectors per thread per step: both loads are issued before either is used.
    for (; i + stride < vectors; i += 2 * stride) {
      uint4 a0 = va[i], a1 = va[i + stride];
      uint4 b0 = kInputs == 2 ? vb[i] : zero;
      uint4 b1 = kInputs == 2 ? vb[i + stride] : zero;
      vo[i] = apply_vector<kHalf, kInputs>(a0, b0, op);
      vo[i + stride] = apply_vector<kHalf, kInputs>(a1, b1, op);
    }
    if (i < vectors) vo[i] = apply_vector<kHalf, kInputs>(va[i], kInputs == 2 ? vb[i] : zero, op);
    done = vectors * kPerVector;
  }
  for (uint64_t i = done + tid; i < n; i += stride) {
    float x = load_one<kHalf>(a, i);
    float y = kInputs == 2 ? load_one<kHalf>(b, i) : 0.0f;
    store_one<kHalf>(out, i, op(x, y));
  }
}

template <bool kHalf>
__device__ __forceinline__ void bias_act(void* y, const void* bias, uint32_t rows, uint32_t cols,
                                         uint32_t relu) {
  const uint64_t n = (uint64_t)rows * cols;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = load_one<kHalf>(y, i) + load_one<kHalf>(bias, i % cols);
    if (relu != 0 && v < 0.0f) v = 0.0f;
    store_one<kHalf>(y, i, v);
  }
}

}  // namespace elementwise

#define NVHCQ_EW_BINARY(name, half, Op)                                                  \
  extern "C" __global__ void name(void* out, const void* a, const void* b, uint64_t n) { \
    elementwise::map<half, 2, elementwise::Op>(out, a, b, n);                            \
  }
#define NVHCQ_EW_UNARY(name, half, Op)                                    \
  extern "C" __global__ void name(void* out, const void* a, uint64_t n) { \
    elementwise::map<half, 1, elementwise::Op>(out, a, a, n);             \
  }

NVHCQ_EW_BINARY(ew_add_f32, false, Add)
NVHCQ_EW_BINARY(ew_mul_f32, false, Mul)
NVHCQ_EW_UNARY(ew_exp_f32, false, Exp)
NVHCQ_EW_UNARY(ew_relu_f32, false, Relu)
NVHCQ_EW_BINARY(ew_add_f16, true, Add)
NVHCQ_EW_BINARY(ew_mul_f16, true, Mul)
NVHCQ_EW_UNARY(ew_exp_f16, true, Exp)
NVHCQ_EW_UNARY(ew_relu_f16, true, Relu)

extern "C" __global__ void bias_act_f32(void* y, const void* bias, uint32_t rows, uint32_t cols,
                                        uint32_t relu) {
  elementwise::bias_act<false>(y, bias, rows, cols, relu);
}
extern "C" __global__ void bias_act_f16(void* y, const void* bias, uint32_t rows, uint32_t cols,
                                        uint32_t relu) {
  elementwise::bias_act<true>(y, bias, rows, cols, relu);
}
