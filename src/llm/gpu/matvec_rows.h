// How a decode matrix-vector launch splits its rows: the weight format of a
// product, whether it runs the pipelined loop, the rows a warp takes at once
// and the grid (gpu_llama_plan.cpp launches what these choose).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/llm_formats.cuh"

namespace nvhcq::llm {

// Threads of a matrix-vector block (llm_matvec.cu's MV_THREADS), and its warps.
constexpr uint32_t kMatvecThreads = 256;
constexpr uint32_t kMatvecWarps = kMatvecThreads / 32;

// The weight format every matrix of a product has, or -1 where they differ
// (llm_matvec.cu's job_format on the GPU).
int one_format(const std::vector<const LlmGpuMatrix*>& mats);

// Whether a product's matrices are of two formats, Q4_K and Q6_K (Q4_K_M's
// Q/K/V in the layers whose V is Q6_K): such a store or add product has an
// early-loading kernel, from a build of its own (llm_mv_early_mixed,
// kMvBuildQ4KQ6K).
bool q4k_with_q6k(const std::vector<const LlmGpuMatrix*>& mats);

// Whether a product runs llm_matvec.cu's pipelined loop: every matrix of one
// format that MV_PIPELINE's default pipelines (llm_matvec_tuning.cuh).
bool pipelined(const std::vector<const LlmGpuMatrix*>& mats, bool swiglu);

// Blocks of a matrix-vector launch whose warps take `tasks` tasks: one task a
// warp, at most max_blocks (the warps then take several).
uint64_t matvec_blocks(uint64_t tasks, uint64_t max_blocks);

// Rows a warp of the product of `segments` takes at once (matvec_rows.cpp says
// how they are chosen). `rows`: the rows the launch's warps share
// (LlmMatvecJob::rows); `max_blocks`: its grid at most; `wanted`: a count
// asked for (GpuLlamaOptions::matvec_rows), taken where it divides the rows
// and a pipelined round stays within a row, 0 for none.
int rows_per_warp(const std::vector<const LlmGpuMatrix*>& segments, bool swiglu, uint64_t rows,
                  uint64_t max_blocks, int wanted = 0);

// The blocks a cluster of llm_swiglu_cluster.cu's gate/up takes for
// `supers` Q8_K super-blocks of SwiGLU output on a GPU of `slots` block slots
// (SMs x LLM_SWIGLU_CLUSTER_BLOCKS_PER_SM), under `setting`
// (GpuLlamaOptions::swiglu_clusters: "on", "auto"; anything else none), in a
// step of self-ordered launches (`chained`) or not: 4 or 8, or 0 for the
// plain gate/up kernels. "on": eight where every cluster fits in the slots at once,
// else four; "auto": four, self-ordered, where they fill three quarters of
// the slots or more (8B's 56 super-blocks: 224 blocks of the H200's 264;
// 1B's 32 in clusters of eight decoded 16% slower, docs/perf-notes.md).
int swiglu_cluster_size(const std::string& setting, bool chained, uint64_t supers, uint64_t slots);

// The rows a warp GpuLlamaOptions::matvec_rows ("what:R,...", R 1, 2 or 4)
// names for the decode product `what` ("qkv", "wo", "ffn_gate_up",
// "ffn_down", "logits"); 0 where it names none. Throws UsageError where the
// list is malformed.
int matvec_rows_for(const std::string& spec, const std::string& what);

}  // namespace nvhcq::llm
