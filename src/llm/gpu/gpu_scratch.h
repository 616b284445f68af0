#pragma once
// The GPU engine's work buffers: device addresses of the vectors a decode step
// reads and writes (one allocation), and of the batch buffers a prefill uses
// (another, sized for the prefill batch).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/accelerator.h"
#include "llm/gpu/gpu_llama.h"
#include "llm/model/model_config.h"

namespace nvhcq::llm {

struct GpuLlama::Scratch {
  // Split-K ways a prefill product may use (its partial products need scratch).
  static constexpr int kMaxKSplits = 4;
  // Tiles a prefill product may split in halves at its tail (one counter each).
  static constexpr int kMaxTailPairs = 1024;

  // Decode (one token).
  uint64_t state = 0;      // LlmStepState
  uint64_t x = 0;          // f32 [n_embd], the residual stream
  uint64_t qkv = 0;        // f32 [q_dim + 2 kv_dim]
  uint64_t qkv_tagged = 0;  // u64 [q_dim + 2 kv_dim]: tagged values (llm_tagged.cuh)
  uint64_t attn = 0;       // f32 [q_dim]
  uint64_t h = 0;          // f32 [n_ff], silu(gate) * up
  uint64_t gate = 0, up = 0;  // f32 [n_ff], when gate and up cannot share a launch
  uint64_t logits = 0;     // f32 [n_vocab]
  uint64_t partial = 0;    // attention splits' parts
  uint64_t counters = 0;   // u32 [n_kv], attention merge counters
  uint64_t history = 0;    // i32 [context], token chosen after each position
  uint64_t rope = 0;       // float2 [context][n_rot / 2]
  uint64_t step_barrier = 0;  // u64, the persistent step's grid-barrier counter
  uint64_t step_times = 0;    // u64 [max_step_times()], its barrier timestamps (--profile)
  static uint64_t max_step_times(const ModelConfig& c) { return 8ull * c.n_layer + 16; }

  // Prefill (batch_tokens rows each).
  int batch_tokens = 0;
  uint64_t batch_token_ids = 0;  // i32 [batch]
  uint64_t batch_x = 0;          // f32 [batch][n_embd]
  uint64_t batch_xn = 0;         // f16/bf16 [batch][n_embd], normalized
  uint64_t batch_qkv = 0;        // f32 [batch][q_dim + 2 kv_dim]
  uint64_t batch_attn = 0;       // f16/bf16 [batch][q_dim]
  uint64_t batch_h = 0;          // f16/bf16 [batch][n_ff]
  uint64_t batch_partial = 0;    // f32 split-K partial products, or tail halves' accumulators
  uint64_t batch_partial_bytes = 0;
  uint64_t batch_tail_counts = 0;  // uint32 [kMaxTailPairs], zero between launches

  std::unique_ptr<gpu::DeviceMemory> allocate_decode(gpu::Accelerator& acc, const ModelConfig& c, int context,
                                                     int splits);
  std::unique_ptr<gpu::DeviceMemory> allocate_batch(gpu::Accelerator& acc, const ModelConfig& c, int tokens);
  // The first `floats` of the RoPE table (all of it by default): a position's
  // row is n_rot of them.
  void upload_rope(gpu::Accelerator& acc, const gpu::DeviceMemory& decode, const std::vector<float>& table,
                   size_t floats = SIZE_MAX);
};

}  // namespace nvhcq::llm
