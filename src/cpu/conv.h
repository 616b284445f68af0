#pragma once
// 2-D convolution, transposed convolution and pooling on contiguous NCHW arrays of
// a compute type T (float or double; the tensor backend converts f16/bf16 to f32
// around these calls). Convolution is im2col + the blocked GEMM of matmul.h, run
// on the default thread pool over (image, group, output column block).

#include <cstdint>

namespace nvhcq::cpu {

struct Conv2dShape {
  int64_t n = 1, c_in = 1, h = 1, w = 1;        // input
  int64_t c_out = 1, kh = 1, kw = 1;            // weight [c_out, c_in/groups, kh, kw]
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  int64_t out_h = 1, out_w = 1;                 // output [n, c_out, out_h, out_w]
};

// out = conv2d(x, weight) + bias (bias may be null).
template <typename T>
void conv2d(const Conv2dShape& s, const T* x, const T* weight, const T* bias, T* out);

// Transposed convolution. Weight is [c_in, c_out/groups, kh, kw]; `s.out_h/out_w`
// are the (already computed) output sizes, output padding included.
template <typename T>
void conv_transpose2d(const Conv2dShape& s, const T* x, const T* weight, const T* bias, T* out);

struct Pool2dShape {
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t out_h = 1, out_w = 1;
};

// Max over each window; padding never wins (it is -infinity). T may be int64_t.
template <typename T>
void max_pool2d(const Pool2dShape& s, const T* x, T* out);
// Mean over each window; with count_include_pad the divisor is kh*kw, otherwise the
// number of in-bounds elements.
template <typename T>
void avg_pool2d(const Pool2dShape& s, bool count_include_pad, const T* x, T* out);

}  // namespace nvhcq::cpu
