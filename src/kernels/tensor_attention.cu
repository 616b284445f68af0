// Scaled dot-product attention for the tensor layer (src/cpu/attention.cpp's
// semantics): one block per query row; the row's scores go to a scratch buffer
// [rows, kv_len] of f32, then a NaN-propagating max, exp and sum, and the
// weighted sum of V, all in f32, rounded once to the output dtype. A row whose
// scores are all -inf (fully masked) gives NaN, as on the CPU.
#include "tensor_common.cuh"

struct nvt_attn_shape {
  long long batch, q_len, kv_len, head_dim, value_dim;
  int causal, has_mask;
};

template <bool kMax>
__device__ float nvt_block_reduce(float v, float* scratch) {
  for (int m = 16; m > 0; m >>= 1) {
    const float o = nvt_shfl_xor(v, m);
    v = kMax ? nvt_max(v, o) : v + o;
  }
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  if (threadIdx.x < 32) {
    v = threadIdx.x < warps ? scratch[threadIdx.x] : (kMax ? -NVT_INF : 0.0f);
    for (int m = 16; m > 0; m >>= 1) {
      const float o = nvt_shfl_xor(v, m);
      v = kMax ? nvt_max(v, o) : v + o;
    }
    if (threadIdx.x == 0) scratch[32] = v;
  }
  __syncthreads();
  v = scratch[32];
  __syncthreads();
  return v;
}

template <typename TR>
__device__ void nvt_attention(void* out_v, const void* q_v, const void* k_v, const void* v_v,
                              const void* mask_v, float* scores, nvt_attn_shape s, float scale) {
  typedef typename TR::S S;
  S* out = (S*)out_v;
  const S* q = (const S*)q_v;
  const S* k = (const S*)k_v;
  const S* v = (const S*)v_v;
  const S* mask = (const S*)mask_v;
  __shared__ float scratch[33];
  const long long rows = s.batch * s.q_len;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const long long b = r / s.q_len, l = r % s.q_len;
    const S* qr = q + r * s.head_dim;
    const S* kb = k + b * s.kv_len * s.head_dim;
    const S* vb = v + b * s.kv_len * s.value_dim;
    float* sc = scores + r * s.kv_len;
    float best = -NVT_INF;
    for (long long j = threadIdx.x; j < s.kv_len; j += blockDim.x) {
      float dot = 0.0f;
      const S* kr = kb + j * s.head_dim;
      for (long long e = 0; e < s.head_dim; ++e) dot += TR::load(qr[e]) * TR::load(kr[e]);
      float score = dot * scale;
      if (s.has_mask) score += TR::load(mask[r * s.kv_len + j]);
      if (s.causal && j > l) score = -NVT_INF;
      sc[j] = score;
      best = nvt_max(best, score);
    }
    best = nvt_block_reduce<true>(best, scratch);
    float denom = 0.0f;
    for (long long j = threadIdx.x; j < s.kv_len; j += blockDim.x) {
      const float p = expf(sc[j] - best);
      sc[j] = p;
      denom += p;
    }
    denom = nvt_block_reduce<false>(denom,
                                    scratch);  // also orders the sc[] writes before the reads below
    for (long long e = threadIdx.x; e < s.value_dim; e += blockDim.x) {
      float acc = 0.0f;
      for (long long j = 0; j < s.kv_len; ++j) acc += sc[j] * TR::load(vb[j * s.value_dim + e]);
      out[r * s.value_dim + e] = TR::store(acc / denom);
    }
    __syncthreads();
  }
}

#define NVT_ATTN_PARAMS                                                                     \
  (void* out, const void* q, const void* k, const void* v, const void* mask, float* scores, \
   nvt_attn_shape s, float scale)
#define NVT_ATTN_ARGS (out, q, k, v, mask, scores, s, scale)
NVT_FLOAT_KERNELS(nvt_attention, NVT_ATTN_PARAMS, NVT_ATTN_ARGS)
