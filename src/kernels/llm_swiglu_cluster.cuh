// The clustered gate/up kernels (llm_swiglu_cluster.cu) as the host plans
// them: threads a block, blocks an SM holds at once (its launch bounds: 128
// registers a thread), where a block's stage of one super-block's SwiGLU
// outputs starts in its dynamic shared memory (after the Q8_K activations of
// `cols` inputs), and the bytes the block takes in all.
#pragma once

#include "llm_jobs.cuh"

#define LLM_SWIGLU_CLUSTER_THREADS 256
#define LLM_SWIGLU_CLUSTER_BLOCKS_PER_SM 2

LLM_HD uint32_t llm_swiglu_cluster_stage_at(int cols) { return (llm_act_smem_bytes(kActQ8K, cols) + 15) / 16 * 16; }
LLM_HD uint32_t llm_swiglu_cluster_smem_bytes(int cols) { return llm_swiglu_cluster_stage_at(cols) + 4 * LLM_SUPER; }
