#include "model_reference_forward.h"

#include <cmath>
#include <stdexcept>

#include "llm/quant/half.h"
#include "llm/quant/quant_registry.h"

namespace nvhcq::llm::model_test {

ReferenceModel::Matrix ReferenceModel::matrix(const GgufFile& f, const std::string& name) const {
  const GgufTensorInfo& info = f.tensor_info(name);
  Matrix m;
  m.cols = static_cast<int>(info.dims[0]);
  m.rows = static_cast<int>(info.dims.size() > 1 ? info.dims[1] : 1);
  m.activation_type = quant_ops(info.type).vec_dot_type;
  std::vector<float> row(static_cast<size_t>(m.cols));
  const uint64_t row_bytes = ggml_row_bytes(info.type, static_cast<uint64_t>(m.cols));
  const uint8_t* data = f.tensor_data(info).data();
  m.v.resize(static_cast<size_t>(m.rows) * m.cols);
  for (int r = 0; r < m.rows; ++r) {
    dequantize_row(info.type, data + r * row_bytes, row.data(), m.cols);
    for (int c = 0; c < m.cols; ++c)
      m.v[static_cast<size_t>(r) * m.cols + c] = row[static_cast<size_t>(c)];
  }
  return m;
}

std::vector<double> ReferenceModel::vector(const GgufFile& f, const std::string& name) const {
  return matrix(f, name).v;
}

ReferenceModel::ReferenceModel(const GgufFile& f) {
  const GgufMetadata& md = f.metadata();
  const std::string arch = md.get_string("general.architecture");
  neox_ = arch == "qwen2";
  n_layer_ = static_cast<int>(md.get_u32(arch + ".block_count"));
  n_embd_ = static_cast<int>(md.get_u32(arch + ".embedding_length"));
  n_head_ = static_cast<int>(md.get_u32(arch + ".attention.head_count"));
  n_head_kv_ = static_cast<int>(md.get_u32(arch + ".attention.head_count_kv"));
  head_dim_ = n_embd_ / n_head_;
  n_rot_ = static_cast<int>(md.find_u32(arch + ".rope.dimension_count").value_or(head_dim_));
  eps_ = md.get_f32(arch + ".attention.layer_norm_rms_epsilon");
  base_ = md.get_f32(arch + ".rope.freq_base");
  if (f.find_tensor("rope_freqs.weight")) freq_factors_ = vector(f, "rope_freqs.weight");
  embd_ = matrix(f, "token_embd.weight");
  n_vocab_ = embd_.rows;
  output_ = f.find_tensor("output.weight") ? matrix(f, "output.weight") : embd_;
  output_norm_ = vector(f, "output_norm.weight");
  for (int i = 0; i < n_layer_; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    Layer l;
    l.attn_norm = vector(f, b + "attn_norm.weight");
    l.ffn_norm = vector(f, b + "ffn_norm.weight");
    l.wq = matrix(f, b + "attn_q.weight");
    l.wk = matrix(f, b + "attn_k.weight");
    l.wv = matrix(f, b + "attn_v.weight");
    l.wo = matrix(f, b + "attn_output.weight");
    if (f.find_tensor(b + "attn_q.bias")) {
      l.bq = vector(f, b + "attn_q.bias");
      l.bk = vector(f, b + "attn_k.bias");
      l.bv = vector(f, b + "attn_v.bias");
    }
    l.gate = matrix(f, b + "ffn_gate.weight");
    l.up = matrix(f, b + "ffn_up.weight");
    l.down = matrix(f, b + "ffn_down.weight");
    layers_.push_back(std::move(l));
  }
}

std::vector<double> ReferenceModel::matvec(const Matrix& m, const std::vector<double>& in,
                                           bool round) {
  if (static_cast<int>(in.size()) != m.cols) throw std::logic_error("reference matvec: bad shape");
  std::vector<double> x = in;
  if (round && m.activation_type != GgmlType::F32) {
    std::vector<float> f(in.begin(), in.end()), back(in.size());
    std::vector<uint8_t> q(ggml_row_bytes(m.activation_type, in.size()));
    quantize_row(m.activation_type, f.data(), q.data(), m.cols);
    dequantize_row(m.activation_type, q.data(), back.data(), m.cols);
    x.assign(back.begin(), back.end());
  }
  std::vector<double> y(static_cast<size_t>(m.rows));
  for (int r = 0; r < m.rows; ++r) {
    double s = 0.0;
    const double* w = m.v.data() + static_cast<size_t>(r) * m.cols;
    for (int c = 0; c < m.cols; ++c) s += w[c] * x[static_cast<size_t>(c)];
    y[static_cast<size_t>(r)] = s;
  }
  return y;
}

std::vector<double> ReferenceModel::rms_norm(const std::vector<double>& x,
                                             const std::vector<double>& w) const {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps_);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * w[i];
  return y;
}

void ReferenceModel::rope(std::vector<double>& x, int n_heads, int pos) const {
  for (int h = 0; h < n_heads; ++h) {
    double* v = x.data() + static_cast<size_t>(h) * head_dim_;
    for (int i = 0; i < n_rot_ / 2; ++i) {
      double theta = pos * std::pow(base_, -2.0 * i / n_rot_);
      if (!freq_factors_.empty()) theta /= freq_factors_[static_cast<size_t>(i)];
      const int a = neox_ ? i : 2 * i;
      const int b = neox_ ? i + n_rot_ / 2 : 2 * i + 1;
      const double x0 = v[a], x1 = v[b];
      v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
      v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
    }
  }
}

std::vector<double> ReferenceModel::forward(const std::vector<int32_t>& tokens,
                                            const ReferenceOptions& options) const {
  const int n = static_cast<int>(tokens.size());
  auto mv = [&](const Matrix& m, const std::vector<double>& v) {
    return matvec(m, v, options.round_activations);
  };
  std::vector<std::vector<double>> x(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) {
    const double* e =
        embd_.v.data() + static_cast<size_t>(tokens[static_cast<size_t>(t)]) * n_embd_;
    x[static_cast<size_t>(t)].assign(e, e + n_embd_);
  }
  auto round_f16 = [&](std::vector<double>& v) {
    if (!options.round_kv_to_f16) return;
    for (double& d : v) d = fp16_to_fp32(fp32_to_fp16(static_cast<float>(d)));
  };
  auto add = [](std::vector<double>& a, const std::vector<double>& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] += b.empty() ? 0.0 : b[i];
  };
  const int gqa = n_head_ / n_head_kv_;
  for (const Layer& l : layers_) {
    std::vector<std::vector<double>> q(static_cast<size_t>(n)), k(q), v(q);
    for (int t = 0; t < n; ++t) {
      const std::vector<double> xn = rms_norm(x[static_cast<size_t>(t)], l.attn_norm);
      q[t] = mv(l.wq, xn);
      k[t] = mv(l.wk, xn);
      v[t] = mv(l.wv, xn);
      add(q[t], l.bq);
      add(k[t], l.bk);
      add(v[t], l.bv);
      rope(q[t], n_head_, t);
      rope(k[t], n_head_kv_, t);
      round_f16(k[t]);
      round_f16(v[t]);
    }
    for (int t = 0; t < n; ++t) {
      std::vector<double> attn(static_cast<size_t>(n_head_) * head_dim_, 0.0);
      for (int h = 0; h < n_head_; ++h) {
        const int g = h / gqa;
        std::vector<double> s(static_cast<size_t>(t + 1));
        double max = -INFINITY;
        for (int j = 0; j <= t; ++j) {
          double d = 0.0;
          for (int i = 0; i < head_dim_; ++i) {
            d += q[t][static_cast<size_t>(h * head_dim_ + i)] *
                 k[j][static_cast<size_t>(g * head_dim_ + i)];
          }
          s[static_cast<size_t>(j)] = d / std::sqrt(static_cast<double>(head_dim_));
          max = std::max(max, s[static_cast<size_t>(j)]);
        }
        double sum = 0.0;
        for (double& e : s) sum += (e = std::exp(e - max));
        for (int j = 0; j <= t; ++j) {
          for (int i = 0; i < head_dim_; ++i) {
            attn[static_cast<size_t>(h * head_dim_ + i)] +=
                s[static_cast<size_t>(j)] / sum * v[j][static_cast<size_t>(g * head_dim_ + i)];
          }
        }
      }
      add(x[static_cast<size_t>(t)], mv(l.wo, attn));
    }
    for (int t = 0; t < n; ++t) {
      const std::vector<double> xn = rms_norm(x[static_cast<size_t>(t)], l.ffn_norm);
      std::vector<double> g = mv(l.gate, xn);
      const std::vector<double> u = mv(l.up, xn);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      add(x[static_cast<size_t>(t)], mv(l.down, g));
    }
  }
  std::vector<double> logits;
  logits.reserve(static_cast<size_t>(n) * n_vocab_);
  for (int t = 0; t < n; ++t) {
    const std::vector<double> y = mv(output_, rms_norm(x[static_cast<size_t>(t)], output_norm_));
    logits.insert(logits.end(), y.begin(), y.end());
  }
  return logits;
}

}  // namespace nvhcq::llm::model_test
