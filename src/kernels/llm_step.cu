// The small kernels around a decode step: embedding lookup at its start and the
// hand-over to the next step at its end (greedy token, next position), and
// SwiGLU where gate and up are separate products.
#include "llm_act_prep.cuh"  // block_sum, rms_scale
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
// does, rounded to f16 (bf16 when `bf16`) for the tensor-core products, after
// the row has taken the split-K partial products of the add product before it
// where `splits` > 0 (partial + z * split_stride, summed as add_partials sums
// them, llm_sum_splits). A block has LLM_NORM_THREADS threads; thread t
// handles elements t, t + LLM_NORM_THREADS, ... in that order. A row of up to
// NORM_HELD values a thread stays in its registers, every load asked for at
// once: as three loops over the row (add, sum of squares, scale) the norms
// waited a round trip per element and pass (8B F16, pp512: 1,498 us of norms
// against 875 held). Longer rows loop. The sum of squares is in float64, as
// the CPU sums it.
#define NORM_HELD 16

// The scale 1 / rms of a row from each thread's sum of squares.
__device__ __forceinline__ float row_rms_scale(double ss, int cols, float eps) {
  __shared__ double red[LLM_NORM_THREADS / 32];
  return rms_scale(block_sum<LLM_NORM_THREADS, CtaSync>(ss, red), cols, eps);
}

__device__ __forceinline__ uint16_t rms_out(float v, float scale, float w, int bf16) {
  const float y = __fmul_rn(__fmul_rn(v, scale), w);
  return bf16 ? float_to_bf16(y) : float_to_half(y);
}

__device__ __forceinline__ void add_rmsnorm_row(float* row, const float* p, size_t split_stride, int splits,
                                                const float* w, uint16_t* out_row, int cols, float eps, int bf16) {
  const int t = (int)threadIdx.x;
  double ss = 0.0;
  if (cols <= NORM_HELD * LLM_NORM_THREADS) {
    // The block size a constant: element j of a thread is at a fixed offset
    // from its first, one address for all of them (a run-time stride took a
    // 64-bit address a value and 254 registers).
    float* r = row + t;
    const float* pt = splits > 0 ? p + t : nullptr;
    const float* wt = w + t;
    uint16_t* o = out_row + t;
    float v[NORM_HELD];
#pragma unroll
    for (int j = 0; j < NORM_HELD; ++j) v[j] = t + j * LLM_NORM_THREADS < cols ? r[j * LLM_NORM_THREADS] : 0.0f;
    if (splits > 0) {
      // Split by split, each element's sum in llm_sum_splits' order.
      float sum[NORM_HELD];
#pragma unroll
      for (int j = 0; j < NORM_HELD; ++j) sum[j] = 0.0f;
      for (int z = 0; z < splits; ++z, pt += split_stride) {
#pragma unroll
        for (int j = 0; j < NORM_HELD; ++j) {
          if (t + j * LLM_NORM_THREADS < cols) sum[j] += pt[j * LLM_NORM_THREADS];
        }
      }
#pragma unroll
      for (int j = 0; j < NORM_HELD; ++j) {
        if (t + j * LLM_NORM_THREADS < cols) {
          v[j] += sum[j];
          r[j * LLM_NORM_THREADS] = v[j];
        }
      }
    }
#pragma unroll
    for (int j = 0; j < NORM_HELD; ++j) {
      if (t + j * LLM_NORM_THREADS < cols) ss += (double)v[j] * (double)v[j];
    }
    const float scale = row_rms_scale(ss, cols, eps);
#pragma unroll
    for (int j = 0; j < NORM_HELD; ++j) {
      if (t + j * LLM_NORM_THREADS < cols) {
        o[j * LLM_NORM_THREADS] = rms_out(v[j], scale, wt[j * LLM_NORM_THREADS], bf16);
      }
    }
    return;
  }
  if (splits > 0) {
    for (int i = t; i < cols; i += LLM_NORM_THREADS) row[i] += llm_sum_splits(p + i, split_stride, splits);
  }
  for (int i = t; i < cols; i += LLM_NORM_THREADS) ss += (double)row[i] * (double)row[i];
  const float scale = row_rms_scale(ss, cols, eps);
  for (int i = t; i < cols; i += LLM_NORM_THREADS) out_row[i] = rms_out(row[i], scale, w[i], bf16);
}

// Each row of x normalized (block per row).
extern "C" __global__ void __launch_bounds__(LLM_NORM_THREADS)
    rmsnorm_rows(const float* x, const float* w, uint16_t* out, int cols, float eps, int bf16) {
  // (Without splits the row is only read.)
  add_rmsnorm_row((float*)x + (size_t)blockIdx.x * cols, nullptr, 0, 0, w, out + (size_t)blockIdx.x * cols, cols,
                  eps, bf16);
}

// The same after the row of x (the residual stream, n_tokens rows of cols)
// has taken the split-K partial products of the add product before it
// (partial + z * n_tokens * cols, [token][col]): one launch and one pass
// instead of two. Four blocks an SM (64 registers, no spills) take a batch
// of 512 rows in one wave.
extern "C" __global__ void __launch_bounds__(LLM_NORM_THREADS, 4)
    add_splits_rmsnorm_rows(float* x, const float* w, uint16_t* out, int cols, float eps, int bf16,
                            const float* partial, int splits, int n_tokens) {
  add_rmsnorm_row(x + (size_t)blockIdx.x * cols, partial + (size_t)blockIdx.x * cols, (size_t)n_tokens * cols,
                  splits, w, out + (size_t)blockIdx.x * cols, cols, eps, bf16);
}
