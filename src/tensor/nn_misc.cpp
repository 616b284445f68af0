// linear, embedding, attention, one_hot, cross_entropy.
#include <cmath>
#include <limits>

#include "base/error.h"
#include "tensor/graph_builder.h"
#include "tensor/nn.h"

namespace nvhcq::tensor::nn {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  build::require_defined("linear", x, "input");
  build::require_defined("linear", weight, "weight");
  build::require_rank("linear", weight, 2, "weight");
  if (x.ndim() < 1 || x.shape().back() != weight.shape()[1]) {
    throw Error("linear: input " + shape_str(x.shape()) + " does not match weight " + shape_str(weight.shape()));
  }
  Tensor y = x.matmul(weight.t());
  if (bias.defined()) {
    if (bias.shape() != Shape{weight.shape()[0]}) {
      throw Error("linear: bias shape " + shape_str(bias.shape()) + " should be [" + std::to_string(weight.shape()[0]) + "]");
    }
    y = y.add(bias);
  }
  return y;
}

Tensor embedding(const Tensor& ids, const Tensor& weight) {
  build::require_defined("embedding", ids, "ids");
  build::require_defined("embedding", weight, "weight");
  build::require_rank("embedding", weight, 2, "weight");
  if (!is_int(ids.dtype())) {
    throw Error(std::string("embedding: ids must have an integer dtype, got ") + dtype_name(ids.dtype()));
  }
  Shape out = ids.shape();
  out.push_back(weight.shape()[1]);
  return weight.index_select(0, ids.reshape({ids.numel()})).reshape(out);
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    bool is_causal, std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  build::require_defined(op, q, "q");
  build::require_defined(op, k, "k");
  build::require_defined(op, v, "v");
  const std::string& device = build::same_device(op, {&q, &k, &v, &mask});
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2) throw Error(std::string(op) + ": q, k and v need at least 2 axes");
  const int64_t l = q.shape()[q.ndim() - 2], e = q.shape().back();
  const int64_t s = k.shape()[k.ndim() - 2], ev = v.shape().back();
  if (k.shape().back() != e || v.shape()[v.ndim() - 2] != s) {
    throw Error(std::string(op) + ": shapes q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " +
                shape_str(v.shape()) + " do not match");
  }
  DType t = promote_types(promote_types(q.dtype(), k.dtype()), v.dtype());
  if (!is_float(t)) build::unsupported_dtype(op, t);
  auto batch_of = [](const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); };
  Shape batch = broadcast_shapes(broadcast_shapes(batch_of(q), batch_of(k), op), batch_of(v), op);
  auto full = [&](const Tensor& x, int64_t rows, int64_t cols) {
    Shape sh = batch;
    sh.insert(sh.end(), {rows, cols});
    return build::broadcast(x.cast(t), sh);
  };
  std::vector<NodePtr> src = {full(q, l, e).node(), full(k, s, e).node(), full(v, s, ev).node()};
  if (mask.defined()) {
    Tensor additive = mask.dtype() == DType::kBool
                          ? Tensor::where(mask, build::constant(Scalar(0.0), t, {}, device),
                                          build::constant(Scalar(-std::numeric_limits<double>::infinity()), t, {}, device))
                          : mask.cast(t);
    Shape ms = batch;
    ms.insert(ms.end(), {l, s});
    Shape combined = broadcast_shapes(additive.shape(), ms, op);
    if (combined != ms) {
      throw Error(std::string(op) + ": mask shape " + shape_str(mask.shape()) + " does not broadcast to " + shape_str(ms));
    }
    src.push_back(build::broadcast(additive, ms).node());
  }
  Shape out_shape = batch;
  out_shape.insert(out_shape.end(), {l, ev});
  Tensor out = build::make(Op::kAttention, t, out_shape, device, std::move(src));
  out.node()->attention.scale = scale.value_or(e > 0 ? 1.0 / std::sqrt(static_cast<double>(e)) : 1.0);
  out.node()->attention.causal = is_causal;
  out.node()->attention.has_mask = mask.defined();
  return out;
}

Tensor one_hot(const Tensor& classes, int64_t num_classes) {
  build::require_defined("one_hot", classes, "classes");
  if (!is_int(classes.dtype())) {
    throw Error(std::string("one_hot: classes must have an integer dtype, got ") + dtype_name(classes.dtype()));
  }
  if (num_classes <= 0) throw Error("one_hot: num_classes must be positive, got " + std::to_string(num_classes));
  Tensor range = Tensor::arange(num_classes, classes.dtype(), classes.device());
  return classes.unsqueeze(-1).eq(range).cast(DType::kI64);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const std::string& reduction, double label_smoothing) {
  build::require_defined("cross_entropy", logits, "logits");
  build::require_defined("cross_entropy", target, "target");
  build::same_device("cross_entropy", {&logits, &target});
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    throw Error("cross_entropy: reduction must be mean, sum or none, not '" + reduction + "'");
  }
  if (label_smoothing < 0 || label_smoothing > 1) throw Error("cross_entropy: label_smoothing must be in [0, 1]");
  if (logits.ndim() == 1) {
    Tensor t = is_int(target.dtype()) ? target.reshape({1}) : target.unsqueeze(0);
    Tensor loss = cross_entropy(logits.unsqueeze(0), t, reduction, label_smoothing);
    return reduction == "none" ? loss.reshape({}) : loss;
  }
  if (logits.ndim() != 2) throw Error("cross_entropy: logits must be [N, C] or [C], got " + shape_str(logits.shape()));
  if (!is_float(logits.dtype())) build::unsupported_dtype("cross_entropy", logits.dtype());
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  Tensor logp = logits.log_softmax(1);
  Tensor loss;
  if (is_int(target.dtype())) {
    if (target.shape() != Shape{n}) {
      throw Error("cross_entropy: class targets must have shape [" + std::to_string(n) + "], got " +
                  shape_str(target.shape()));
    }
    Tensor nll = logp.gather(1, target.unsqueeze(1)).squeeze(1).neg();
    loss = label_smoothing > 0 ? nll.mul(1.0 - label_smoothing).add(logp.mean({1}).neg().mul(label_smoothing)) : nll;
  } else {
    if (target.shape() != logits.shape()) {
      throw Error("cross_entropy: probability targets must have the logits' shape " + shape_str(logits.shape()) +
                  ", got " + shape_str(target.shape()));
    }
    Tensor p = target.cast(logp.dtype());
    if (label_smoothing > 0) p = p.mul(1.0 - label_smoothing).add(label_smoothing / static_cast<double>(c));
    loss = p.mul(logp).sum({1}).neg();
  }
  if (reduction == "mean") return loss.mean();
  if (reduction == "sum") return loss.sum();
  return loss;
}

}  // namespace nvhcq::tensor::nn
