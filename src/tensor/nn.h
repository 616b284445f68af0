#pragma once
// Neural-network functions over Tensors (PyTorch's torch.nn.functional
// semantics unless docs/tensor.md says otherwise). Optional tensors (bias,
// weight, mask) are passed as Tensor() when absent.

#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nvhcq::tensor::nn {

// A pair of sizes (height, width); one number means both.
struct Size2 {
  int64_t h, w;
  Size2(int64_t both) : h(both), w(both) {}  // NOLINT: implicit on purpose
  Size2(int64_t height, int64_t width) : h(height), w(width) {}
};

// x [..., in] @ weight[out, in]^T + bias[out].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// x [N, C, L], weight [O, C/groups, k] -> [N, O, L'].
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
// x [N, C, H, W], weight [O, C/groups, kh, kw] -> [N, O, H', W'].
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Size2 stride = 1,
              Size2 padding = 0, Size2 dilation = 1, int64_t groups = 1);
// x [N, C, H, W], weight [C, O/groups, kh, kw] -> [N, O, H', W'] with
// H' = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Size2 stride = 1,
                        Size2 padding = 0, Size2 output_padding = 0, int64_t groups = 1, Size2 dilation = 1);
// stride defaults to the kernel size. Input [N, C, H, W] or [C, H, W].
Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                  Size2 dilation = 1);
Tensor avg_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                  bool count_include_pad = true);

// Inference batch norm over axis 1: (x - mean) / sqrt(var + eps) * weight + bias.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), double eps = 1e-5);
// Normalizes over the trailing axes of extents `normalized_shape`.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// x * rsqrt(mean(x^2 over normalized_shape) + eps) * weight.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(), double eps = 1e-6);
// x [N, C, ...] normalized per (sample, group of C/groups channels).
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5);

// Rows of weight [V, D] picked by integer ids (any shape) -> ids.shape + [D].
Tensor embedding(const Tensor& ids, const Tensor& weight);
// softmax(q k^T * scale + mask) v over the last two axes; batch axes broadcast.
// A bool mask marks the positions to keep; a float mask is added. is_causal hides
// keys after the query position (top-left aligned). scale defaults to 1/sqrt(E).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);
// Integer classes -> i64 one-hot vectors of length num_classes.
Tensor one_hot(const Tensor& classes, int64_t num_classes);
// logits [N, C] (or [C]); target: class indices [N] (or 0-d) of an integer dtype, or
// class probabilities with the logits' shape. reduction: "mean", "sum" or "none".
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const std::string& reduction = "mean",
                     double label_smoothing = 0.0);

}  // namespace nvhcq::tensor::nn
