// What the LLM kernels are asked to do: job descriptions that live in device
// memory, written once by the host when a model is loaded and read by the
// kernels of every decode step. A kernel gets one pointer, so a captured graph
// never needs new arguments: what changes between steps (the token, the
// position) lives in LlmStepState, which the kernels themselves advance.
#pragma once

#include "llm_formats.cuh"

// The decode position and the token being fed, in device memory.
struct LlmStepState {
  int32_t token;         // input token of this step (written by the previous step's argmax)
  int32_t pos;           // its position; the KV cache holds positions [0, pos)
  uint64_t argmax;       // (ordered logit << 32) | ~index, the best logit so far
  int32_t n_tokens;      // prefill: tokens in this batch
  int32_t reserved[3];
};

// One matrix-vector product (or up to LLM_MAX_SEGMENTS sharing an input):
//   a   = norm ? rmsnorm(in) * norm : in         (cols values)
//   y_r = W_r . a                                 (rows of the segments, in order)
// then by kernel flavour: store y (+ bias), add y into out (residual), or
// silu(gate) * up for two segments, or store logits and track their argmax.
struct LlmMatvecJob {
  LlmGpuMatrix m[LLM_MAX_SEGMENTS];
  uint64_t bias[LLM_MAX_SEGMENTS];  // f32 per segment row, or 0
  uint64_t in;                      // f32 [cols]
  uint64_t norm;                    // f32 [cols], or 0
  uint64_t out;                     // f32 [rows]
  uint64_t state;                   // LlmStepState* (logits: argmax slot)
  int32_t segments;
  int32_t cols;
  int32_t rows;  // sum of the segments' rows (swiglu: rows of one)
  float eps;
};

// Decode attention of one layer for the token at state->pos: RoPE on its query
// and key, the key and value appended to the cache, softmax(q . K / sqrt(d)) . V
// over positions [0, pos]. Grid: (n_kv_heads, splits); the splits of a KV head
// share the positions and are merged by the last one to finish.
struct LlmAttentionJob {
  uint64_t qkv;       // f32: q [n_head * hd], k [n_kv * hd], v [n_kv * hd]
  uint64_t k_cache;   // f16 [n_kv][capacity][hd] of this layer
  uint64_t v_cache;
  uint64_t out;       // f32 [n_head * hd]
  uint64_t inv_freq;  // double [n_rot / 2]
  uint64_t state;     // LlmStepState*
  uint64_t partial;   // f32 [n_kv][splits][n_gqa * (hd + 2)]
  uint64_t counters;  // u32 [n_kv], zero between launches
  int32_t n_head, n_kv, head_dim, n_rot;
  int32_t capacity, neox, splits;
  float scale;
};

#define LLM_ATTN_THREADS 128
// Query heads per KV head times head_dim that one attention block can hold.
#define LLM_ATTN_MAX_OUT 1024
#define LLM_ATTN_MAX_GQA 8
// Blocks per KV head in decode attention.
#define LLM_ATTN_MAX_SPLITS 32

// Dynamic shared memory of a matrix-vector block for `cols` inputs.
LLM_HD uint32_t llm_act_smem_bytes(int kind, int cols) {
  const uint32_t n = static_cast<uint32_t>(cols);
  switch (kind) {
    case kActQ8x32: return n + (n / LLM_GROUP) * 12;
    case kActQ8K: return n + (n / LLM_SUPER) * 4 + (n / 16) * 4;
    case kActF16:
    case kActBF16: return 2 * n;
    default: return 4 * n;
  }
}
