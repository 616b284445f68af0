#include "llm/model/llama_model.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "llm/model/attention.h"
#include "llm/model/vector_ops.h"

namespace nvhcq::llm {

LlamaModel::LlamaModel(GgufFile file)
    : file_(std::move(file)),
      config_(ModelConfig::from_metadata(file_.metadata())),
      weights_(ModelWeights::from_gguf(file_, config_)),
      rope_(config_, weights_.rope_freq_factors) {}

std::unique_ptr<LlamaModel> LlamaModel::open(const std::string& path) {
  return std::make_unique<LlamaModel>(GgufFile::open(path));
}

void LlamaModel::prefetch(const std::function<void(double)>& progress) const {
  uint64_t total = 0;
  for (const GgufTensorInfo& t : file_.tensors()) total += t.n_bytes;
  uint64_t done = 0, last_report = 0;
  volatile uint8_t sink = 0;
  constexpr uint64_t kPage = 4096;
  for (const GgufTensorInfo& t : file_.tensors()) {
    file_.will_need(t);
    const std::span<const uint8_t> bytes = file_.tensor_data(t);
    uint8_t acc = 0;
    for (uint64_t off = 0; off < bytes.size(); off += kPage) acc ^= bytes[off];
    sink = sink ^ acc;
    done += t.n_bytes;
    if (progress && (done - last_report > total / 50 || done == total)) {
      last_report = done;
      progress(total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total));
    }
  }
  (void)sink;
}

KvCache LlamaModel::make_cache(int capacity, KvCacheType type) const {
  return KvCache(static_cast<int>(config_.n_layer), static_cast<int>(config_.n_head_kv),
                 static_cast<int>(config_.head_dim), capacity, type);
}

void LlamaModel::reserve_scratch(int n) {
  if (n <= scratch_tokens_) return;
  const size_t t = static_cast<size_t>(n);
  const ModelConfig& c = config_;
  x_.resize(t * c.n_embd);
  xn_.resize(t * c.n_embd);
  tmp_.resize(t * c.n_embd);
  q_.resize(t * c.q_dim());
  attn_.resize(t * c.q_dim());
  k_.resize(t * c.kv_dim());
  v_.resize(t * c.kv_dim());
  gate_.resize(t * c.n_ff);
  up_.resize(t * c.n_ff);
  cos_sin_.resize(t * c.n_rot);
  scratch_tokens_ = n;
}

void LlamaModel::forward(std::span<const int32_t> tokens, KvCache& cache, cpu::ThreadPool& pool,
                         std::vector<float>& logits, bool all_logits) {
  const int n = static_cast<int>(tokens.size());
  if (tokens.empty()) throw UsageError("forward: no tokens");
  if (cache.n_layer() != static_cast<int>(config_.n_layer) ||
      cache.n_head_kv() != static_cast<int>(config_.n_head_kv) ||
      cache.head_dim() != static_cast<int>(config_.head_dim)) {
    throw UsageError("forward: the KV cache was made for another model");
  }
  if (cache.size() + n > cache.capacity()) {
    throw UsageError("the context is full: " + std::to_string(cache.size()) + " + " +
                     std::to_string(n) + " tokens exceed the KV cache's " +
                     std::to_string(cache.capacity()) + " positions");
  }
  for (int32_t id : tokens) {
    if (id < 0 || static_cast<uint32_t>(id) >= config_.n_vocab) {
      throw UsageError("token id " + std::to_string(id) + " is outside the model's vocabulary of " +
                       std::to_string(config_.n_vocab));
    }
  }
  const size_t vocab = config_.n_vocab;
  logits.resize(all_logits ? vocab * tokens.size() : vocab);
  const int start = cache.size();
  try {
    for (int done = 0; done < n; done += max_batch_) {
      const int b = std::min(max_batch_, n - done);
      const bool last = done + b == n;
      float* out = all_logits ? logits.data() + static_cast<size_t>(done) * vocab
                              : (last ? logits.data() : nullptr);
      forward_batch(tokens.data() + done, b, cache, pool, out, all_logits);
    }
  } catch (...) {
    cache.truncate(std::min(start, cache.size()));
    throw;
  }
}

void LlamaModel::forward_batch(const int32_t* tokens, int n, KvCache& cache, cpu::ThreadPool& pool,
                               float* logits, bool all_logits) {
  reserve_scratch(n);
  const ModelConfig& c = config_;
  const int d = static_cast<int>(c.n_embd);
  const int pos0 = cache.size();
  const WeightMatrix& embd = weights_.token_embd;
  pool.parallel_for(0, n, 4, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      embd.ops->to_float(embd.row(tokens[t]), x_.data() + t * d, d);
      rope_.angles(pos0 + t, cos_sin_.data() + t * c.n_rot);
    }
  });
  cache.set_size(pos0 + n);
  for (int l = 0; l < static_cast<int>(c.n_layer); ++l) layer_forward(l, n, pos0, cache, pool);
  if (logits == nullptr) return;

  // The output head, for the last token only unless every token's logits are wanted.
  const int first = all_logits ? 0 : n - 1;
  const int rows = n - first;
  for (int t = 0; t < rows; ++t) {
    vec::rms_norm(x_.data() + static_cast<size_t>(first + t) * d, weights_.output_norm.data(),
                  xn_.data() + static_cast<size_t>(t) * d, d, c.rms_eps);
  }
  act_.reset(xn_.data(), rows, d);
  const MatmulTarget head[] = {{&weights_.output, logits, static_cast<int64_t>(c.n_vocab)}};
  matmul(pool, act_, head);
}

void LlamaModel::layer_forward(int l, int n, int pos0, KvCache& cache, cpu::ThreadPool& pool) {
  const ModelConfig& c = config_;
  const LayerWeights& w = weights_.layers[static_cast<size_t>(l)];
  const int d = static_cast<int>(c.n_embd);
  const int qd = static_cast<int>(c.q_dim()), kvd = static_cast<int>(c.kv_dim());
  const int hd = static_cast<int>(c.head_dim);
  const int64_t ff = c.n_ff;
  auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };

  // Attention.
  pool.parallel_for(0, n, 8, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      vec::rms_norm(x_.data() + t * d, w.attn_norm.data(), xn_.data() + t * d, d, c.rms_eps);
    }
  });
  act_.reset(xn_.data(), n, d);
  const MatmulTarget qkv[] = {{&w.wq, q_.data(), qd, bias(w.bq)},
                              {&w.wk, k_.data(), kvd, bias(w.bk)},
                              {&w.wv, v_.data(), kvd, bias(w.bv)}};
  matmul(pool, act_, qkv);
  pool.parallel_for(0, n, 4, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const float* cs = cos_sin_.data() + t * c.n_rot;
      rope_.apply(q_.data() + t * qd, static_cast<int>(c.n_head), hd, cs);
      rope_.apply(k_.data() + t * kvd, static_cast<int>(c.n_head_kv), hd, cs);
      cache.store(l, pos0 + static_cast<int>(t), k_.data() + t * kvd, v_.data() + t * kvd);
    }
  });
  causal_attention(pool, cache, l, q_.data(), n, pos0, static_cast<int>(c.n_head), attn_.data());
  act_.reset(attn_.data(), n, qd);
  const MatmulTarget wo[] = {{&w.wo, tmp_.data(), d}};
  matmul(pool, act_, wo);
  const int64_t nd = static_cast<int64_t>(n) * d;
  for (int64_t i = 0; i < nd; ++i) x_[static_cast<size_t>(i)] += tmp_[static_cast<size_t>(i)];

  // Feed-forward (SwiGLU).
  pool.parallel_for(0, n, 8, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      vec::rms_norm(x_.data() + t * d, w.ffn_norm.data(), xn_.data() + t * d, d, c.rms_eps);
    }
  });
  act_.reset(xn_.data(), n, d);
  const MatmulTarget gate_up[] = {{&w.w_gate, gate_.data(), ff}, {&w.w_up, up_.data(), ff}};
  matmul(pool, act_, gate_up);
  pool.parallel_for(0, n * ff, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      gate_[static_cast<size_t>(i)] =
          vec::silu(gate_[static_cast<size_t>(i)]) * up_[static_cast<size_t>(i)];
  });
  act_.reset(gate_.data(), n, ff);
  const MatmulTarget down[] = {{&w.w_down, tmp_.data(), d}};
  matmul(pool, act_, down);
  for (int64_t i = 0; i < nd; ++i) x_[static_cast<size_t>(i)] += tmp_[static_cast<size_t>(i)];
}

}  // namespace nvhcq::llm
