#include "cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/thread_pool.h"

namespace nvhcq::cpu {

template <typename T>
void attention(const AttentionShape& s, const T* q, const T* k, const T* v, const T* mask, int64_t mask_stride_b,
               int64_t mask_stride_l, int64_t mask_stride_s, bool causal, T scale, T* out) {
  const int64_t rows = s.batch * s.q_len;
  const int64_t work_per_row = std::max<int64_t>(1, s.kv_len * (s.head_dim + s.value_dim));
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / work_per_row), [&](int64_t r0, int64_t r1) {
    std::vector<T> scores(static_cast<size_t>(s.kv_len));
    std::vector<T> acc(static_cast<size_t>(s.value_dim));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / s.q_len, l = r % s.q_len;
      const T* qr = q + r * s.head_dim;
      const T* kb = k + b * s.kv_len * s.head_dim;
      const T* vb = v + b * s.kv_len * s.value_dim;
      T best = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < s.kv_len; ++j) {
        T dot = 0;
        const T* kr = kb + j * s.head_dim;
        for (int64_t e = 0; e < s.head_dim; ++e) dot += qr[e] * kr[e];
        T score = dot * scale;
        if (mask != nullptr) score += mask[b * mask_stride_b + l * mask_stride_l + j * mask_stride_s];
        if (causal && j > l) score = -std::numeric_limits<T>::infinity();
        scores[j] = score;
        if (score > best || score != score) best = score;
      }
      std::fill(acc.begin(), acc.end(), T(0));
      T denom = 0;
      for (int64_t j = 0; j < s.kv_len; ++j) {
        const T p = std::exp(scores[j] - best);  // NaN when every score is -inf
        denom += p;
        const T* vr = vb + j * s.value_dim;
        for (int64_t e = 0; e < s.value_dim; ++e) acc[e] += p * vr[e];
      }
      T* o = out + r * s.value_dim;
      for (int64_t e = 0; e < s.value_dim; ++e) o[e] = acc[e] / denom;
    }
  });
}

template void attention<float>(const AttentionShape&, const float*, const float*, const float*, const float*, int64_t,
                               int64_t, int64_t, bool, float, float*);
template void attention<double>(const AttentionShape&, const double*, const double*, const double*, const double*,
                                int64_t, int64_t, int64_t, bool, double, double*);

}  // namespace nvhcq::cpu
