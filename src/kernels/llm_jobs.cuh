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
  // (The host writes the fields above between steps, and those below once.)
  // Self-ordered decode launches (llm_chain.cuh): blocks of this state's steps
  // finished so far, and the count at which the current step began. The count
  // only grows, which keeps the tags of llm_tagged.cuh unique.
  uint32_t chain_done;
  uint32_t chain_base;
  int32_t reserved[1];
  // Timeline stamps of a self-ordered step (kernels built with LLM_TRACE,
  // llm_chain.cuh): u64 [blocks of a step][LLM_STAMPS], 0 for none.
  uint64_t trace;
};

// What a traced block stamps (%globaltimer, ns): its start, the end of its
// wait for the launches ahead, the end of its preparation (matrix-vector
// products: the activations in shared memory; attention: the rotated queries
// and the appended key and value; 0 where a kernel has none), and its end,
// before it counts itself finished.
#define LLM_STAMP_START 0
#define LLM_STAMP_RELEASED 1
#define LLM_STAMP_PREPARED 2
#define LLM_STAMP_DONE 3
#define LLM_STAMPS 4

// A launch's place in a decode step of self-ordered launches (llm_chain.cuh):
// the GPU may start it before the launches ahead of it have finished, and its
// blocks wait until `after` blocks of the step's earlier launches have. All
// zero (not chained): the GPU orders the launch after the one before it.
struct LlmChainLink {
  int32_t chained;
  int32_t after;
};

// A decode launch's output handed over already quantized as the next
// product's activations (llm_handoff.cuh), or plain f32 values.
#define LLM_HANDOFF_NONE 0
#define LLM_HANDOFF_Q8X32 1  // the kActQ8x32 layout
#define LLM_HANDOFF_Q8K 2    // the kActQ8K layout (attention to Wo only)
#define LLM_HANDOFF_TAGGED 3  // f32 values tagged with their launch (Q/K/V to the attention; llm_tagged.cuh)

// What a matrix-vector product does with its results (llm_matvec.cu kernels
// are named after these; the persistent step keeps them in its phases).
#define LLM_EPI_STORE 0   // y (+ bias)
#define LLM_EPI_ADD 1     // out += y (residual)
#define LLM_EPI_SWIGLU 2  // silu(gate) * up
#define LLM_EPI_LOGITS 3  // y, and its argmax into the step state

// Kernels take their job by value (a __grid_constant__ parameter, read from
// the constant bank) so that no kernel starts with a dependent memory load.
// Device functions take it by reference only where the compiler inlines them
// (as it does every helper that does so today): a reference that survives into
// a real call is a generic address of the kernel parameter, and on nv reads
// through one faulted (an MMU fault at 0x0; docs/perf-notes.md).
//
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
  // Rows a warp takes at once (1, 2 or 4; divides every segment's rows): enough
  // that each lane keeps ~8 groups of loads in flight on short rows.
  int32_t rows_per_warp;
  // The swiglu_handoff kernels (llm_handoff.cuh): LLM_HANDOFF_* of the output
  // (the next product's activations), staged in shared memory from byte
  // stage_at of the dynamic shared memory until every row of the block is
  // done. Needs whole groups of 32 rows a block (R = 4) or a cluster pair
  // (R = 2). (The add_handoff kernels read `in` in the kActQ8x32 layout.)
  int32_t out_handoff;
  int32_t stage_at;
  // A store product tagging its outputs (out_handoff LLM_HANDOFF_TAGGED, in
  // a self-ordered step): the tag's offset from the step's chain_base
  // (llm_tagged.cuh); `out` then holds a 64-bit word a row.
  int32_t out_tag;
  int32_t reserved[1];  // (LlmStepPhase's size a multiple of 16)
  LlmChainLink chain;
};

// Attention of one layer for n_tokens consecutive tokens from state->pos
// (decode: one). Block (unit, split, token) rotates the queries of its unit
// (heads_per_block query heads of one KV head; unit u is KV head
// u / (n_head / n_kv / heads_per_block)) by the RoPE table and takes its share
// of the positions [0, pos + token] with an online softmax; the splits of a
// unit are merged by the last one to finish. In decode the blocks whose range
// holds the token's position take its rotated key and value from qkv, and the
// KV head's first unit appends them to the cache (append); a prefill stores all
// of them first (rope_kv_store).
struct LlmAttentionJob {
  uint64_t qkv;       // f32 per token: q [n_head * hd], k [n_kv * hd], v [n_kv * hd]
  uint64_t k_cache;   // f16 [n_kv][capacity][hd] of this layer
  uint64_t v_cache;
  uint64_t out;       // per token [n_head * hd], f32 or f16 (out_f16)
  uint64_t rope;      // float2 (cos, sin) [capacity][n_rot / 2]
  uint64_t state;     // LlmStepState*
  uint64_t partial;   // f32 [units][splits][heads_per_block * (hd + 2)]
  uint64_t counters;  // u32 [units], zero between launches
  int32_t n_head, n_kv, head_dim, n_rot;
  int32_t capacity, neox, splits, append;
  int32_t qkv_stride, out_stride;  // elements per token
  int32_t out_f16;   // output type: 0 f32, 1 f16, 2 bf16
  int32_t n_tokens;  // prefill: tokens in the batch
  int32_t heads_per_block;  // query heads per unit: a divisor of n_head / n_kv
  int32_t out_handoff;      // attention_head_handoff: LLM_HANDOFF_* of out (out_f16 is not read)
  // Decode: 0, qkv is f32 and the block waits for the launches ahead; else
  // qkv holds the Q/K/V launch's tagged values (llm_tagged.cuh; tag: the
  // step's chain_base plus qkv_tag), and the block waits for those only.
  int32_t qkv_tag;
  float scale;
  LlmChainLink chain;
};

// Prefill: Y = X . W^T for n_tokens activation rows X (f16, or bf16 for BF16
// weights) against a weight matrix dequantized tile by tile in shared memory,
// on the tensor cores. Epilogues as the matrix-vector kernels: store (y + bias,
// f32), add (y into f32), swiglu (silu(X . gate^T) * (X . up^T), written in the
// activation type for the next product).
// Up to LLM_MAX_SEGMENTS matrices sharing the input may be one product, their
// rows concatenated (Q, K and V), each a whole number of GW tiles (128 rows).
// Split-K (the add epilogue, gridDim.z > 1): split z writes its partial
// products to partial + z * n_tokens * rows ([token][row] f32), and
// add_partials -- or, when the RMSNorm of the residual stream follows,
// add_splits_rmsnorm_rows (llm_step.cu) -- sums the splits in order into y, so
// results do not depend on which CTA finishes first.
// Tail split (wgmma store and swiglu kernels, tail_pairs > 0): the grid is
// one row of CTAs over the tiles (token tiles fastest); the first gridDim.x -
// 2 * tail_pairs take a tile each, the rest in pairs the two halves of the
// k-tiles of the last tail_pairs tiles, so a last wave that would run few
// whole tiles runs twice as many half tiles. Each half leaves its accumulators in tail_partial; the
// second to finish (tail_counts, one zeroed counter per pair, set back to zero)
// adds first half + second half, the same sum whichever finishes first, and
// runs the epilogue.
struct LlmGemmJob {
  LlmGpuMatrix w[LLM_MAX_SEGMENTS];  // swiglu: gate, up
  uint64_t bias[LLM_MAX_SEGMENTS];   // f32 per segment row, or 0
  uint64_t x;                        // [n_tokens][cols]
  uint64_t y;                        // [n_tokens][ldy]
  uint64_t partial;                  // split-K scratch
  int32_t segments;
  int32_t n_tokens;
  int32_t ldy;
  int32_t tail_pairs;
  uint64_t tail_partial;  // f32, a CTA's accumulators per half
  uint64_t tail_counts;   // uint32 per pair
};

// The splits' partial products of one output element (p = its value in split
// 0, split_stride = n_tokens * rows), summed in split order: the one order
// every kernel that adds them uses, so where they are added does not change
// the result.
LLM_HD float llm_sum_splits(const float* p, size_t split_stride, int splits) {
  float s = 0.0f;
  for (int z = 0; z < splits; ++z) s += p[z * split_stride];
  return s;
}

// The persistent decode step (llm_decode_step.cu): one launch per token whose
// CTAs, one per SM, run the step's phases in order with a grid-wide barrier
// between dependent ones. Phases are written once by the host
// (gpu_llama_persistent.cpp).
#define LLM_PHASE_EMBED 0      // x = embedding row of state->token
#define LLM_PHASE_MATVEC 1     // one LlmMatvecJob, rows staged in shared memory
#define LLM_PHASE_ATTENTION 2  // one LlmAttentionJob, virtual blocks (unit, split)
#define LLM_PHASE_FINISH 3     // the greedy token becomes the next input (finish_step)

// A matrix-vector phase is cut into chunks of whole rows (swiglu: row pairs of
// gate and up) of one segment, each staged in one shared-memory slot. Chunk c
// of a phase goes to CTA c % gridDim.x.
struct LlmStepPhase {
  int32_t kind;
  int32_t act;         // matvec: LlmActKind of the activations
  int32_t epilogue;    // matvec: LLM_EPI_*
  int32_t chunk_rows;  // matvec: rows per chunk (the last of a segment may hold fewer)
  int32_t parts;       // matvec: warps sharing one row (each takes a range of its groups)
  int32_t chunks[LLM_MAX_SEGMENTS];  // matvec: chunks of each segment
  int32_t sync_after;  // a grid-wide barrier follows (the next phase reads what this one wrote)
  int32_t reserved[3];  // (sizeof a multiple of 16)
  LlmMatvecJob mv;     // matvec; embed: m[0] embedding, out x; finish: in = history
  LlmAttentionJob at;  // attention
};

// Its CTA: compute warps and one producer warp (16 warps: four per SM
// sub-partition, so each may have 128 registers), at most LLM_STEP_MAX_SLOTS
// slots, and its own bookkeeping in the first LLM_STEP_CONTROL_BYTES of the
// dynamic shared memory.
#define LLM_STEP_COMPUTE_WARPS 15
#define LLM_STEP_THREADS ((LLM_STEP_COMPUTE_WARPS + 1) * 32)
#define LLM_STEP_MAX_SLOTS 16
#define LLM_STEP_CONTROL_BYTES 8192

struct LlmStepParams {
  uint64_t phases;        // LlmStepPhase[count] in device memory
  uint64_t barrier;       // u64 arrival counter, only ever increased
  uint64_t timestamps;    // u64 [barriers + 2]: globaltimer at the start, each barrier and the end (0: none)
  int32_t count;          // phases
  int32_t barriers;       // grid barriers per step
  int32_t slots;          // shared-memory slots for staged weights
  int32_t slot_bytes;
  int32_t work_bytes;     // shared memory for activations / attention, between control and slots
  int32_t reserved;
};

#define LLM_ATTN_THREADS 128
// Query heads per KV head times head_dim that one attention block can hold.
#define LLM_ATTN_MAX_OUT 1024
#define LLM_ATTN_MAX_GQA 8
// Blocks per unit in decode attention.
#define LLM_ATTN_MAX_SPLITS 32
// Positions a decode-attention split takes at least (the kernels' AT_MIN_CHUNK
// unless a measurement overrides it): a token's context of at most this many
// positions is attended by one block per unit, and the host then replays a
// step launched with one split (gpu_llama.h).
#define LLM_ATTN_MIN_CHUNK 256
// Decode attention in units of one query head (attention_head): threads of a
// block, and the 16-byte loads of key rows (and as many of value rows) each
// lane has in flight per tile of positions.
#define LLM_ATTN_DECODE_THREADS 256
#define LLM_ATTN_DECODE_WARPS (LLM_ATTN_DECODE_THREADS / 32)
#ifndef LLM_ATTN_DECODE_LOADS
#define LLM_ATTN_DECODE_LOADS 4
#endif
// Threads of a prefill RMSNorm block (rmsnorm_rows, add_splits_rmsnorm_rows in
// llm_step.cu): the kernels index their rows by it as a constant, and the plan
// launches them with it.
#define LLM_NORM_THREADS 256
// Shared memory of one attention block (AttentionShared, llm_attention_block.cuh).
#define LLM_ATTN_SHARED_BYTES (25 * 1024 + 128)

// A swiglu product handing its output over (out_handoff, llm_handoff.cuh):
// the rounds its busiest block takes (block 0; grid_warps: the launch's warps),
// and the shared memory that block stages them in (round_rows: rows of a
// block's round; a round's outputs, then two largest magnitudes and two sums).
LLM_HD int llm_swiglu_stage_rounds(int tasks, int grid_warps) { return (tasks + grid_warps - 1) / grid_warps; }
LLM_HD uint32_t llm_swiglu_stage_bytes(int rounds, int round_rows) {
  return 4u * static_cast<uint32_t>(rounds) * static_cast<uint32_t>(round_rows + 4);
}

// Dynamic shared memory of a matrix-vector block for `cols` inputs.
LLM_HD uint32_t llm_act_smem_bytes(int kind, int cols) {
  const uint32_t n = static_cast<uint32_t>(cols);
  switch (kind) {
    case kActQ8x32: return n + (n / LLM_GROUP) * 12;
    case kActQ8K: return llm_q8k_sums_offset(n) + (n / 16) * 4;
    case kActF16:
    case kActBF16: return 2 * n;
    default: return 4 * n;
  }
}
