#include "llm/gpu/gpu_llama.h"
#include "llm/gpu/gpu_scratch.h"

#include <algorithm>
#include <vector>

#include "kernels/llm_jobs.cuh"

namespace nvhcq::llm {
namespace {

// Lays out named regions of one allocation, 256-byte aligned.
class Layout {
 public:
  uint64_t take(uint64_t bytes) {
    const uint64_t at = size_;
    size_ = (size_ + std::max<uint64_t>(bytes, 1) + 255) / 256 * 256;
    return at;
  }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
};

}  // namespace

std::unique_ptr<gpu::DeviceMemory> GpuLlama::Scratch::allocate_decode(gpu::Accelerator& acc, const ModelConfig& c,
                                                                      int context, int splits) {
  Layout l;
  const uint64_t n_gqa = c.n_gqa();
  state = l.take(sizeof(LlmStepState));
  x = l.take(4ull * c.n_embd);
  qkv = l.take(4ull * (c.q_dim() + 2 * c.kv_dim()));
  qkv_tagged = l.take(8ull * (c.q_dim() + 2 * c.kv_dim()));
  attn = l.take(4ull * c.q_dim());
  h = l.take(4ull * c.n_ff);
  gate = l.take(4ull * c.n_ff);
  up = l.take(4ull * c.n_ff);
  logits = l.take(4ull * c.n_vocab);
  // units x heads per unit = n_head_kv x n_gqa, whatever the unit.
  partial = l.take(4ull * c.n_head_kv * splits * (n_gqa * c.head_dim + 2 * n_gqa));
  // One per unit (at most a query head each), then one per Q8_K super-block
  // of the attention output handed over (merge_q8k_handoff).
  counters = l.take(4ull * c.n_head * 2);
  history = l.take(4ull * context);
  rope = l.take(4ull * context * c.n_rot);
  step_barrier = l.take(8);
  step_times = l.take(8 * max_step_times(c));
  auto mem = acc.alloc(l.size());
  // Zeros to start with: the attention counters and the barrier counter must
  // be, and the tagged values (no tag is 0 before the count has wrapped). The
  // RoPE table's rows are uploaded as they are needed (upload_rope): at long
  // contexts it is most of the allocation.
  const uint64_t rope_end = rope + 4ull * context * c.n_rot;
  const std::vector<uint8_t> zeros(std::max(rope, l.size() - rope_end), 0);
  acc.upload(*mem, 0, zeros.data(), rope);
  acc.upload(*mem, rope_end, zeros.data(), l.size() - rope_end);
  for (uint64_t* a : {&state, &x, &qkv, &qkv_tagged, &attn, &h, &gate, &up, &logits, &partial, &counters, &history,
                      &rope, &step_barrier, &step_times}) {
    *a += mem->va();
  }
  return mem;
}

std::unique_ptr<gpu::DeviceMemory> GpuLlama::Scratch::allocate_batch(gpu::Accelerator& acc, const ModelConfig& c,
                                                                     int tokens) {
  Layout l;
  const uint64_t n = static_cast<uint64_t>(tokens);
  batch_tokens = tokens;
  batch_token_ids = l.take(4 * n);
  batch_x = l.take(4 * n * c.n_embd);
  batch_xn = l.take(2 * n * c.n_embd);
  batch_qkv = l.take(4 * n * (c.q_dim() + 2 * c.kv_dim()));
  batch_attn = l.take(2 * n * c.q_dim());
  batch_h = l.take(2 * n * c.n_ff);
  // Split-K partials of the products into the residual stream (n_embd rows).
  batch_partial_bytes = 4ull * kMaxKSplits * n * c.n_embd;
  batch_partial = l.take(batch_partial_bytes);
  batch_tail_counts = l.take(4ull * kMaxTailPairs);
  auto mem = acc.alloc(l.size());
  const std::vector<uint8_t> zeros(4ull * kMaxTailPairs, 0);
  acc.upload(*mem, batch_tail_counts, zeros.data(), zeros.size());
  for (uint64_t* a : {&batch_token_ids, &batch_x, &batch_xn, &batch_qkv, &batch_attn, &batch_h, &batch_partial,
                      &batch_tail_counts}) {
    *a += mem->va();
  }
  return mem;
}

void GpuLlama::Scratch::upload_rope(gpu::Accelerator& acc, const gpu::DeviceMemory& decode,
                                    const std::vector<float>& table, size_t floats) {
  acc.upload(decode, rope - decode.va(), table.data(), std::min(floats, table.size()) * sizeof(float));
}

}  // namespace nvhcq::llm
