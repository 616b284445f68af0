// Attention over an f16 KV cache (llm_jobs.cuh, LlmAttentionJob): one block per
// (unit of query heads, split of the positions, token), each running
// attention_block (llm_attention_block.cuh), or for decode in units of one
// query head attention_head_decode (llm_attention_decode.cuh).
#include "llm_attention_block.cuh"
#include "llm_attention_decode.cuh"
#include "llm_chain.cuh"

extern "C" __global__ void __launch_bounds__(AT_THREADS) attention(const __grid_constant__ LlmAttentionJob job) {
  __shared__ __align__(16) AttentionShared sh;
  prefetch_kv(job, blockIdx.x, blockIdx.y);
  chain_wait(job.chain, (const LlmStepState*)job.state);
  attention_unit<AT_MAX_GQA, CtaSync>(job, sh, blockIdx.x, blockIdx.y, blockIdx.z);
  chain_signal(job.chain, (LlmStepState*)job.state);
}

// Decode with units of one query head (heads_per_block 1): a kernel of its
// own, laid out for few round trips (llm_attention_decode.cuh).
extern "C" __global__ void __launch_bounds__(LLM_ATTN_DECODE_THREADS, 1)
    attention_head(const __grid_constant__ LlmAttentionJob job) {
  __shared__ __align__(16) DecodeHeadShared sh;
  const uint32_t counts = attention_head_decode_unit(job, sh);
  if (counts != 0) chain_signal(job.chain, (LlmStepState*)job.state, counts);
}

// The same, its output handed over quantized for Wo (job.out_handoff,
// llm_handoff.cuh): a kernel of its own, so that the other carries none of it.
extern "C" __global__ void __launch_bounds__(LLM_ATTN_DECODE_THREADS, 1)
    attention_head_handoff(const __grid_constant__ LlmAttentionJob job) {
  __shared__ __align__(16) DecodeHeadShared sh;
  const uint32_t counts = attention_head_decode_unit<LLM_HANDOFF_Q8X32>(job, sh);
  if (counts != 0) chain_signal(job.chain, (LlmStepState*)job.state, counts);
}

// The output handed over as Q8_K super-blocks (LLM_HANDOFF_Q8K), one a
// cluster of 256 / head_dim query heads (handoff_head_q8k): a kernel a head
// size, whose cluster is fixed at compile time.
// (dims: the kernel's __cluster_dims__, or nothing for a head of 256.)
#define AT_Q8K_KERNEL(name, dpl, dims)                                                      \
  extern "C" __global__ void __launch_bounds__(LLM_ATTN_DECODE_THREADS, 1) dims             \
      name(const __grid_constant__ LlmAttentionJob job) {                                   \
    __shared__ __align__(16) DecodeHeadShared sh;                                           \
    const uint32_t counts = attention_head_decode<dpl, LLM_HANDOFF_Q8K, 8 / dpl>(job, sh); \
    if (counts != 0) chain_signal(job.chain, (LlmStepState*)job.state, counts);             \
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
AT_Q8K_KERNEL(attention_head_handoff_q8k_64, 2, __cluster_dims__(4, 1, 1))
AT_Q8K_KERNEL(attention_head_handoff_q8k_128, 4, __cluster_dims__(2, 1, 1))
#endif
AT_Q8K_KERNEL(attention_head_handoff_q8k_256, 8, )

// Prefill: the rotated keys and the values of n tokens into the cache, before
// their attention reads them (block per token).
extern "C" __global__ void __launch_bounds__(AT_THREADS) rope_kv_store(const __grid_constant__ LlmAttentionJob job) {
  const int token = blockIdx.x;
  const int pos = ((const LlmStepState*)job.state)->pos + token;
  store_kv(job, (const float*)job.qkv + (size_t)token * job.qkv_stride, pos, 0, job.n_kv);
}
