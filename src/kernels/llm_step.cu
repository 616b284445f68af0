// The small kernels around a decode step: embedding lookup at its start and the
// hand-over to the next step at its end (greedy token, next position).
#include "llm_jobs.cuh"

// x[t] = row tokens[t] of the embedding matrix, for t < n_tokens (block per token).
extern "C" __global__ void embed_tokens(const LlmGpuMatrix* matrix, const int32_t* tokens, int n_tokens,
                                        float* x) {
  const LlmGpuMatrix m = *matrix;
  const int t = blockIdx.x;
  if (t >= n_tokens) return;
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

// The argmax of the logits becomes the next input token (and is recorded in
// history[pos], the token chosen after position pos); the position advances.
extern "C" __global__ void finish_step(LlmStepState* state, int32_t* history) {
  const unsigned long long best = state->argmax;
  const int32_t token = (int32_t)(0xffffffffu - (uint32_t)(best & 0xffffffffu));
  state->token = token;
  history[state->pos] = token;
  state->pos += 1;
  state->argmax = 0;
}

// out = silu(gate) * up, for models whose gate and up matrices need different
// activation formats (they cannot share one matrix-vector launch).
extern "C" __global__ void swiglu_f32(const float* gate, const float* up, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}
