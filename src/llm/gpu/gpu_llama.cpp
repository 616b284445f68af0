#include "llm/gpu/gpu_llama.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>

#include "base/error.h"
#include "kernels/llm_jobs.cuh"
#include "llm/gpu/weight_repack.h"
#include "llm/model/rope.h"

namespace nvhcq::llm {
namespace {

constexpr uint32_t kMatvecThreads = 256;
constexpr uint32_t kMatvecWarps = kMatvecThreads / 32;
// The kernels' dynamic shared memory stays within what every launch may use
// without an opt-in.
constexpr uint32_t kMaxDynamicShared = 48 * 1024;
// Room per job in the job area (the largest, LlmMatvecJob, is 216 bytes).
constexpr uint64_t kJobSlot = 256;
static_assert(sizeof(LlmMatvecJob) <= kJobSlot && sizeof(LlmAttentionJob) <= kJobSlot);

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Lays out named regions of one allocation.
class Arena {
 public:
  uint64_t take(uint64_t bytes) {
    const uint64_t at = size_;
    size_ = align_up(size_ + std::max<uint64_t>(bytes, 1), 256);
    return at;
  }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
};

}  // namespace

GpuLlama::GpuLlama(const LlamaModel& model, gpu::Accelerator& acc, cpu::ThreadPool& pool,
                   const GpuLlamaOptions& options, const std::function<void(double)>& progress)
    : config_(model.config()), acc_(acc), options_(options), kernels_(acc) {
  const ModelConfig& c = config_;
  if (options_.context < 1) throw UsageError("the GPU context must hold at least one position");
  const uint32_t n_gqa = c.n_gqa();
  if (n_gqa > LLM_ATTN_MAX_GQA || n_gqa * c.head_dim > LLM_ATTN_MAX_OUT || c.head_dim % 8 != 0 ||
      c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    throw FormatError("the GPU attention kernel does not handle " + std::to_string(n_gqa) +
                      " query heads per KV head of " + std::to_string(c.head_dim) +
                      " dimensions (RoPE on " + std::to_string(c.n_rot) + "); use --backend cpu");
  }
  weights_ = GpuWeights::upload(model.weights(), acc_, pool, progress);

  // KV cache: [layer][kv_head][position][head_dim] f16, keys then values.
  kv_bytes_ = 2ull * c.n_layer * c.n_head_kv * static_cast<uint64_t>(options_.context) * c.head_dim * 2;
  kv_ = acc_.alloc(kv_bytes_);

  // Decode attention: enough blocks per KV head to fill the GPU at long contexts
  // (short ones use fewer; see the kernel).
  splits_ = std::clamp(options_.attention_splits > 0
                           ? options_.attention_splits
                           : static_cast<int>(2 * acc_.sm_count() / c.n_head_kv),
                       1, LLM_ATTN_MAX_SPLITS);

  Arena a;
  const uint64_t state = a.take(sizeof(LlmStepState));
  const uint64_t x = a.take(4ull * c.n_embd);
  const uint64_t qkv = a.take(4ull * (c.q_dim() + 2 * c.kv_dim()));
  const uint64_t attn = a.take(4ull * c.q_dim());
  const uint64_t h = a.take(4ull * c.n_ff);
  const uint64_t gate = a.take(4ull * c.n_ff);
  const uint64_t up = a.take(4ull * c.n_ff);
  const uint64_t logits = a.take(4ull * c.n_vocab);
  const uint64_t partial = a.take(4ull * c.n_head_kv * splits_ * (n_gqa * c.head_dim + 2 * n_gqa));
  const uint64_t counters = a.take(4ull * c.n_head_kv);
  const uint64_t history = a.take(4ull * options_.context);
  const uint64_t inv_freq = a.take(8ull * (c.n_rot / 2));
  scratch_ = acc_.alloc(a.size());
  const uint64_t base = scratch_->va();
  state_ = base + state;
  x_ = base + x;
  qkv_ = base + qkv;
  attn_ = base + attn;
  h_ = base + h;
  gate_ = base + gate;
  up_ = base + up;
  logits_ = base + logits;
  partial_ = base + partial;
  counters_ = base + counters;
  history_ = base + history;
  inv_freq_ = base + inv_freq;

  // Scratch starts as zeros (the attention counters must), the RoPE frequencies
  // as the CPU path computes them.
  std::vector<uint8_t> init(a.size(), 0);
  const Rope rope(c, model.weights().rope_freq_factors);
  std::memcpy(init.data() + inv_freq, rope.inv_freq().data(), 8 * rope.inv_freq().size());
  acc_.upload(*scratch_, 0, init.data(), init.size());

  // Jobs: at most 8 per layer (QKV split three ways, attention, Wo, gate and up
  // apart, down) and a few around them.
  jobs_ = acc_.alloc((8ull * c.n_layer + 8) * kJobSlot);
  build_step();
  if (job_bytes_.size() > jobs_->size()) throw Error("the decode step's jobs overflow their area");
  acc_.upload(*jobs_, 0, job_bytes_.data(), job_bytes_.size());

  acc_.begin_capture();
  for (const StepLaunch& l : step_) acc_.launch(*l.kernel, l.args, l.dims);
  graph_ = acc_.end_capture();
}

GpuLlama::~GpuLlama() = default;

uint64_t GpuLlama::push_job(const void* job, size_t bytes) {
  const uint64_t at = job_bytes_.size();
  job_bytes_.resize(at + kJobSlot);
  std::memcpy(job_bytes_.data() + at, job, bytes);
  return jobs_->va() + at;
}

void GpuLlama::add_matvec(const std::string& what, const std::vector<const GpuMatrix*>& segments,
                          const std::vector<uint64_t>& biases, uint64_t in, uint64_t norm, uint64_t out,
                          const std::string& epilogue) {
  // Segments that pair with the same activation format share a launch.
  size_t first = 0;
  uint64_t out_at = out;
  while (first < segments.size()) {
    const int kind = llm_act_kind(segments[first]->desc.format);
    size_t last = first + 1;
    while (last < segments.size() && llm_act_kind(segments[last]->desc.format) == kind &&
           (epilogue == "swiglu" || last - first < LLM_MAX_SEGMENTS)) {
      ++last;
    }
    LlmMatvecJob job{};
    job.segments = static_cast<int32_t>(last - first);
    job.cols = segments[first]->desc.cols;
    int32_t rows = 0;
    for (size_t s = first; s < last; ++s) {
      job.m[s - first] = segments[s]->desc;
      job.bias[s - first] = s < biases.size() ? biases[s] : 0;
      if (segments[s]->desc.cols != job.cols) throw FormatError("matrices sharing an input differ in width");
      rows += segments[s]->desc.rows;
    }
    job.rows = epilogue == "swiglu" ? segments[first]->desc.rows : rows;
    job.in = in;
    job.norm = norm;
    job.out = out_at;
    job.state = state_;
    job.eps = config_.rms_eps;
    const uint32_t smem = llm_act_smem_bytes(kind, job.cols);
    if (smem > kMaxDynamicShared) {
      throw FormatError("'" + segments[first]->name + "': rows of " + std::to_string(job.cols) + " " +
                        act_kind_name(kind) + " activations exceed the GPU kernel's shared memory");
    }
    gpu::LaunchDims d;
    d.block[0] = kMatvecThreads;
    const uint64_t blocks = (static_cast<uint64_t>(job.rows) + kMatvecWarps - 1) / kMatvecWarps;
    d.grid[0] = static_cast<uint32_t>(
        std::clamp<uint64_t>(blocks, 1, static_cast<uint64_t>(acc_.sm_count()) * options_.matvec_blocks_per_sm));
    d.dynamic_shared_bytes = smem;
    const uint64_t job_at = push_job(&job, sizeof(job));
    step_.push_back(StepLaunch{what, &kernels_.matvec(kind, epilogue), gpu::KernelArgs().add(job_at), d});
    out_at += 4ull * rows;
    first = last;
  }
}

void GpuLlama::build_step() {
  const ModelConfig& c = config_;
  const GpuWeights& w = *weights_;
  step_.clear();
  job_bytes_.clear();

  const uint64_t embd_at = push_job(&w.token_embd.desc, sizeof(LlmGpuMatrix));
  {
    gpu::LaunchDims d;
    d.block[0] = 256;
    step_.push_back(StepLaunch{"embed", &kernels_.embed_tokens(),
                               gpu::KernelArgs().add(embd_at).ptr(state_ + offsetof(LlmStepState, token)).add(1).ptr(x_), d});
  }
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const GpuLayer& L = w.layers[l];
    add_matvec("qkv", {&L.wq, &L.wk, &L.wv}, {L.bq, L.bk, L.bv}, x_, L.attn_norm, qkv_, "store");

    LlmAttentionJob aj{};
    aj.qkv = qkv_;
    const uint64_t layer_kv = 2ull * c.n_head_kv * static_cast<uint64_t>(options_.context) * c.head_dim * 2;
    aj.k_cache = kv_->va() + l * layer_kv;
    aj.v_cache = aj.k_cache + layer_kv / 2;
    aj.out = attn_;
    aj.inv_freq = inv_freq_;
    aj.state = state_;
    aj.partial = partial_;
    aj.counters = counters_;
    aj.n_head = static_cast<int32_t>(c.n_head);
    aj.n_kv = static_cast<int32_t>(c.n_head_kv);
    aj.head_dim = static_cast<int32_t>(c.head_dim);
    aj.n_rot = static_cast<int32_t>(c.n_rot);
    aj.capacity = options_.context;
    aj.neox = c.rope_style == RopeStyle::kNeox ? 1 : 0;
    aj.splits = splits_;
    aj.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    gpu::LaunchDims ad;
    ad.block[0] = LLM_ATTN_THREADS;
    ad.grid[0] = c.n_head_kv;
    ad.grid[1] = static_cast<uint32_t>(splits_);
    step_.push_back(StepLaunch{"attention", &kernels_.attention_decode(), gpu::KernelArgs().add(push_job(&aj, sizeof(aj))), ad});

    add_matvec("wo", {&L.wo}, {}, attn_, 0, x_, "add");
    if (llm_act_kind(L.gate.desc.format) == llm_act_kind(L.up.desc.format)) {
      add_matvec("ffn_gate_up", {&L.gate, &L.up}, {}, x_, L.ffn_norm, h_, "swiglu");
    } else {
      add_matvec("ffn_gate_up", {&L.gate}, {}, x_, L.ffn_norm, gate_, "store");
      add_matvec("ffn_gate_up", {&L.up}, {}, x_, L.ffn_norm, up_, "store");
      gpu::LaunchDims sd;
      sd.block[0] = 256;
      sd.grid[0] = (c.n_ff + 255) / 256;
      step_.push_back(StepLaunch{"ffn_gate_up", &kernels_.swiglu(),
                                 gpu::KernelArgs().ptr(gate_).ptr(up_).ptr(h_).add(static_cast<int32_t>(c.n_ff)), sd});
    }
    add_matvec("ffn_down", {&L.down}, {}, h_, 0, x_, "add");
  }
  add_matvec("logits", {&w.output}, {}, x_, w.output_norm, logits_, "logits");
  gpu::LaunchDims fd;
  step_.push_back(StepLaunch{"step", &kernels_.finish_step(), gpu::KernelArgs().ptr(state_).ptr(history_), fd});
}

uint64_t GpuLlama::decode_weight_bytes() const {
  auto bytes = [](const GpuMatrix& m) {
    return gpu_matrix_layout(m.type, m.desc.rows, m.desc.cols).total_bytes();
  };
  uint64_t total = bytes(weights_->output);
  for (const GpuLayer& l : weights_->layers) {
    total += bytes(l.wq) + bytes(l.wk) + bytes(l.wv) + bytes(l.wo) + bytes(l.gate) + bytes(l.up) + bytes(l.down);
  }
  return total;
}

void GpuLlama::write_state(int32_t token, int32_t pos) {
  LlmStepState s{};
  s.token = token;
  s.pos = pos;
  acc_.upload(*scratch_, state_ - scratch_->va(), &s, sizeof(s));
}

void GpuLlama::run_step_graph() { acc_.replay(*graph_); }

void GpuLlama::truncate(int n) {
  if (n < 0 || n > pos_) throw UsageError("truncate: " + std::to_string(n) + " is past the cache's end");
  pos_ = n;
}

void GpuLlama::forward(std::span<const int32_t> tokens) {
  if (tokens.empty()) return;
  if (pos_ + static_cast<int64_t>(tokens.size()) > options_.context) {
    throw UsageError(std::to_string(tokens.size()) + " tokens at position " + std::to_string(pos_) +
                     " do not fit the GPU context of " + std::to_string(options_.context));
  }
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= config_.n_vocab) {
      throw UsageError("token " + std::to_string(t) + " is outside the vocabulary of " +
                       std::to_string(config_.n_vocab));
    }
  }
  for (int32_t t : tokens) {
    write_state(t, pos_);
    run_step_graph();
    ++pos_;
  }
}

void GpuLlama::logits(std::vector<float>& out) {
  out.resize(config_.n_vocab);
  acc_.download(out.data(), *scratch_, logits_ - scratch_->va(), 4ull * config_.n_vocab);
}

int32_t GpuLlama::greedy_token() {
  if (pos_ == 0) throw UsageError("no token has been run yet");
  int32_t t = 0;
  acc_.download(&t, *scratch_, history_ - scratch_->va() + 4ull * (pos_ - 1), 4);
  return t;
}

std::vector<int32_t> GpuLlama::generate_greedy(int32_t first, int steps) {
  if (steps <= 0) return {};
  if (pos_ + steps > options_.context) {
    throw UsageError(std::to_string(steps) + " steps at position " + std::to_string(pos_) +
                     " do not fit the GPU context of " + std::to_string(options_.context));
  }
  if (first < 0 || static_cast<uint32_t>(first) >= config_.n_vocab) {
    throw UsageError("token " + std::to_string(first) + " is outside the vocabulary");
  }
  write_state(first, pos_);
  for (int i = 0; i < steps; ++i) run_step_graph();
  std::vector<int32_t> out(static_cast<size_t>(steps));
  acc_.download(out.data(), *scratch_, history_ - scratch_->va() + 4ull * pos_, 4ull * steps);
  pos_ += steps;
  return out;
}

std::vector<KernelClassTime> GpuLlama::profile_decode(int steps) {
  std::vector<KernelClassTime> classes;
  std::map<std::string, size_t> index;
  for (const StepLaunch& l : step_) {
    if (index.emplace(l.what, classes.size()).second) classes.push_back(KernelClassTime{l.what, 0, 0.0});
    ++classes[index[l.what]].launches;
  }
  if (steps <= 0 || pos_ + steps > options_.context) return classes;
  write_state(0, pos_);
  for (int s = 0; s < steps; ++s) {
    std::vector<gpu::TimePoint> marks;
    marks.push_back(acc_.record_time());
    for (const StepLaunch& l : step_) {
      acc_.launch(*l.kernel, l.args, l.dims);
      marks.push_back(acc_.record_time());
    }
    acc_.synchronize();
    for (size_t i = 0; i < step_.size(); ++i) {
      classes[index[step_[i].what]].microseconds += 1000.0 * acc_.elapsed_ms(marks[i], marks[i + 1]) / steps;
    }
  }
  pos_ += steps;
  return classes;
}

}  // namespace nvhcq::llm
