#include "llm/model/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "llm/model/vector_ops.h"

namespace nvhcq::llm {
namespace {

// One query token against one KV head, for `n_gqa` of the query heads that share
// it: the keys and values of each position are read once for the whole group.
template <typename T>
void attend_group(const T* keys, const T* values, int n_pos, int head_dim, int n_gqa,
                  const float* q, int64_t q_head_stride, float scale, float* out,
                  std::vector<float>& scores) {
  scores.resize(static_cast<size_t>(n_pos) * n_gqa);
  for (int j = 0; j < n_pos; ++j) {
    const T* k = keys + static_cast<int64_t>(j) * head_dim;
    for (int g = 0; g < n_gqa; ++g) {
      scores[static_cast<size_t>(g) * n_pos + j] =
          vec::dot(q + g * q_head_stride, k, head_dim) * scale;
    }
  }
  for (int g = 0; g < n_gqa; ++g) {
    float* s = scores.data() + static_cast<size_t>(g) * n_pos;
    float max = -INFINITY;
    for (int j = 0; j < n_pos; ++j) max = std::max(max, s[j]);
    float sum = 0.0f;
    for (int j = 0; j < n_pos; ++j) {
      s[j] = std::exp(s[j] - max);
      sum += s[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < n_pos; ++j) s[j] *= inv;
    std::memset(out + g * q_head_stride, 0, sizeof(float) * static_cast<size_t>(head_dim));
  }
  for (int j = 0; j < n_pos; ++j) {
    const T* v = values + static_cast<int64_t>(j) * head_dim;
    for (int g = 0; g < n_gqa; ++g) {
      vec::axpy(out + g * q_head_stride, scores[static_cast<size_t>(g) * n_pos + j], v, head_dim);
    }
  }
}

}  // namespace

void causal_attention(cpu::ThreadPool& pool, const KvCache& cache, int layer, const float* q,
                      int n_q, int pos0, int n_head, float* out) {
  const int n_kv = cache.n_head_kv();
  const int hd = cache.head_dim();
  if (n_head % n_kv != 0) throw FormatError("attention: heads not a multiple of KV heads");
  if (pos0 + n_q > cache.size())
    throw UsageError("attention: the cache lacks the batch's positions");
  const int n_gqa = n_head / n_kv;
  const int64_t row = static_cast<int64_t>(n_head) * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const bool f16 = cache.type() == KvCacheType::kF16;
  // A task is one query token and a group of query heads sharing a KV head. Whole
  // groups read each key once for all their heads; when that leaves too few tasks
  // for the threads (one-token decode), groups are split.
  int group = n_gqa;
  while (group % 2 == 0 && static_cast<int64_t>(n_q) * (n_head / group) < 2 * pool.size())
    group /= 2;
  const int groups_per_kv = n_gqa / group;
  const int64_t tasks = static_cast<int64_t>(n_q) * n_kv * groups_per_kv;
  pool.parallel_for(0, tasks, 1, [&](int64_t lo, int64_t hi) {
    thread_local std::vector<float> scores;
    for (int64_t task = lo; task < hi; ++task) {
      const int t = static_cast<int>(task / (n_kv * groups_per_kv));
      const int g = static_cast<int>(task % (n_kv * groups_per_kv));  // head group in the token
      const int kvh = g / groups_per_kv;
      const int n_pos = pos0 + t + 1;
      const float* qh = q + t * row + static_cast<int64_t>(g) * group * hd;
      float* oh = out + t * row + static_cast<int64_t>(g) * group * hd;
      if (f16) {
        attend_group(static_cast<const uint16_t*>(cache.k_head(layer, kvh)),
                     static_cast<const uint16_t*>(cache.v_head(layer, kvh)), n_pos, hd, group, qh,
                     hd, scale, oh, scores);
      } else {
        attend_group(static_cast<const float*>(cache.k_head(layer, kvh)),
                     static_cast<const float*>(cache.v_head(layer, kvh)), n_pos, hd, group, qh, hd,
                     scale, oh, scores);
      }
    }
  });
}

}  // namespace nvhcq::llm
