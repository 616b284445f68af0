// The small kernels around a decode step: embedding lookup at its start and the
// hand-over to the next step at its end (greedy token, next position), and
// SwiGLU where gate and up are separate products.
#include "llm_chain.cuh"
#include "llm_jobs.cuh"

// x[t] = row tokens[t] of the embedding matrix, for t < n_tokens (block per token).
extern "C" __global__ void embed_tokens(const __grid_constant__ LlmGpuMatrix m, const int32_t* tokens,
                                        int n_tokens, float* x, LlmChainLink chain, LlmStepState* state) {
  chain_wait(chain, state);
  const int t = blockIdx.x;
  if (t < n_tokens) {
    const int token = tokens[t];
    float* row = x + (size_t)t * m.cols;
    const int groups = m.cols / LLM_GROUP;
    for (int g = threadIdx.x; g < groups; g += blockDim.x) {
      float v[LLM_GROUP];
      llm_dequant_group(m, token, g, v);
#pragma unroll
      for (int j = 0; j < LLM_GROUP; ++j) row[g * LLM_GROUP + j] = v[j];
    }
  }
  chain_signal(chain, state);
}

// out = silu(gate) * up, for a model whose gate and up matrices pair with
// different activation kinds (a product each, then this).
extern "C" __global__ void swiglu_f32(const float* gate, const float* up, float* out, int n, LlmChainLink chain,
                                      LlmStepState* state) {
  chain_wait(chain, state);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = llm_silu_times(gate[i], up[i]);
  }
  chain_signal(chain, state);
}

// The argmax of the logits becomes the next input token and is recorded in
// history (indexed by the position of the token it follows); the position
// advances past the `advance` tokens just run (decode: 1; prefill: the batch).
// One thread. In a chained step, the last launch: the next step's launches
// count from the blocks finished when it ends.
extern "C" __global__ void finish_step(LlmStepState* state, int32_t* history, int advance, LlmChainLink chain) {
  const uint32_t base = chain_wait(chain, state);
  const unsigned long long best = state->argmax;
  const int32_t token = (int32_t)(0xffffffffu - (uint32_t)(best & 0xffffffffu));
  state->token = token;
  history[state->pos + advance - 1] = token;
  state->pos += advance;
  state->argmax = 0;
  if (chain.chained) state->chain_base = base + (uint32_t)chain.after + 1;
  chain_signal(chain, state);
}

// Prefill: row `row` (cols values) RMS-normalized and scaled by w as the CPU
// does, rounded to f16 (bf16 when `bf16`) for the tensor-core products. Thread
// t handles elements t, t + blockDim.x, ... in both passes.
__device__ __forceinline__ void rmsnorm_row(const float* row, const float* w, uint16_t* out_row, int cols,
                                            float eps, int bf16) {
  __shared__ double red[8];
  double ss = 0.0;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) ss += (double)row[i] * (double)row[i];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  double total = 0.0;
  for (int i = 0; i < (int)(blockDim.x / 32); ++i) total += red[i];
  const float scale = (float)(1.0 / sqrt(total / cols + (double)eps));
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    const float v = __fmul_rn(__fmul_rn(row[i], scale), w[i]);
    out_row[i] = bf16 ? float_to_bf16(v) : float_to_half(v);
  }
}

// Each row of x normalized (block per row).
extern "C" __global__ void __launch_bounds__(256) rmsnorm_rows(const float* x, const float* w, uint16_t* out,
                                                               int cols, float eps, int bf16) {
  rmsnorm_row(x + (size_t)blockIdx.x * cols, w, out + (size_t)blockIdx.x * cols, cols, eps, bf16);
}

// The same after the row of x (the residual stream, n_tokens rows of cols)
// has taken the split-K partial products of the add product before it
// (partial + z * n_tokens * cols, [token][col]), summed as add_partials sums
// them (llm_sum_splits): one launch and one pass instead of two.
extern "C" __global__ void __launch_bounds__(256) add_splits_rmsnorm_rows(float* x, const float* w, uint16_t* out,
                                                                          int cols, float eps, int bf16,
                                                                          const float* partial, int splits,
                                                                          int n_tokens) {
  float* row = x + (size_t)blockIdx.x * cols;
  const float* p = partial + (size_t)blockIdx.x * cols;
  const size_t split_stride = (size_t)n_tokens * cols;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) row[i] += llm_sum_splits(p + i, split_stride, splits);
  rmsnorm_row(row, w, out + (size_t)blockIdx.x * cols, cols, eps, bf16);
}
