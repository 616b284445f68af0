#pragma once
// Causal grouped-query attention over the KV cache, for a batch of query tokens.

#include "cpu/thread_pool.h"
#include "llm/model/kv_cache.h"

namespace nvhcq::llm {

// Query token t (0 <= t < n_q) sits at position pos0 + t and attends to cache
// positions [0, pos0 + t] of `layer` (which must already hold them). q and out are
// [n_q][n_head * head_dim]; query head h reads KV head h / (n_head / n_head_kv).
// Scores are scaled by 1/sqrt(head_dim) and softmaxed in f32.
void causal_attention(cpu::ThreadPool& pool, const KvCache& cache, int layer, const float* q,
                      int n_q, int pos0, int n_head, float* out);

}  // namespace nvhcq::llm
