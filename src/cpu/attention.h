#pragma once
// Scaled dot-product attention on contiguous arrays of T (float or double):
//   out[b, l, :] = softmax_s(scale * q[b, l, :] . k[b, s, :] + mask[b, l, s]) @ v[b, s, :]
// `mask` (optional, additive, may hold -inf) is addressed with the given strides so
// it can broadcast. Causal masking hides key s > l (top-left aligned, as in
// PyTorch's is_causal). A row whose every score is -inf yields NaN.

#include <cstdint>

namespace nvhcq::cpu {

struct AttentionShape {
  int64_t batch = 1, q_len = 1, kv_len = 1, head_dim = 1, value_dim = 1;
};

template <typename T>
void attention(const AttentionShape& s, const T* q, const T* k, const T* v, const T* mask, int64_t mask_stride_b,
               int64_t mask_stride_l, int64_t mask_stride_s, bool causal, T scale, T* out);

}  // namespace nvhcq::cpu
