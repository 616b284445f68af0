// Attention over an f16 KV cache (llm_jobs.cuh, LlmAttentionJob): one block per
// (KV head, split of the positions, token), each running attention_block
// (llm_attention_block.cuh).
#include "llm_attention_block.cuh"

extern "C" __global__ void __launch_bounds__(AT_THREADS) attention(const __grid_constant__ LlmAttentionJob job) {
  __shared__ __align__(16) AttentionShared sh;
  switch (job.head_dim / 32) {
    case 2: attention_block<2, CtaSync>(job, sh, blockIdx.x, blockIdx.y, blockIdx.z); break;
    case 4: attention_block<4, CtaSync>(job, sh, blockIdx.x, blockIdx.y, blockIdx.z); break;
    default: attention_block<8, CtaSync>(job, sh, blockIdx.x, blockIdx.y, blockIdx.z); break;
  }
}

// Prefill: the rotated keys and the values of n tokens into the cache, before
// their attention reads them (block per token).
extern "C" __global__ void __launch_bounds__(AT_THREADS) rope_kv_store(const __grid_constant__ LlmAttentionJob job) {
  const int token = blockIdx.x;
  const int pos = ((const LlmStepState*)job.state)->pos + token;
  store_kv(job, (const float*)job.qkv + (size_t)token * job.qkv_stride, pos, 0, job.n_kv);
}
