#include "llm/gpu/gpu_llama.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/env.h"
#include "base/error.h"
#include "base/log.h"
#include "kernels/gemm_plan.h"
#include "kernels/llm_jobs.cuh"
#include "llm/gpu/gpu_scratch.h"
#include "llm/gpu/matvec_rows.h"
#include "llm/gpu/weight_repack.h"
#include "llm/model/rope.h"

namespace nvhcq::llm {

namespace {
// The SM carve-out (KiB) a decode step's launches ask for on nv and sm_90:
// decode was faster with it than with 164, 228 or the launches' own 32-64
// (GpuLlamaOptions::decode_carveout_kib).
constexpr int kDecodeCarveoutKibSm90 = 196;
}  // namespace

GpuLlama::GpuLlama(const LlamaModel& model, gpu::Accelerator& acc, cpu::ThreadPool& pool,
                   const GpuLlamaOptions& options, const std::function<void(double)>& progress)
    : config_(model.config()),
      acc_(acc),
      options_(options),
      kernels_(acc, options.trace_decode ? std::vector<std::string>{"LLM_TRACE=1"} : std::vector<std::string>{}) {
  const ModelConfig& c = config_;
  if (options_.context < 1) throw UsageError("the GPU context must hold at least one position");
  if (options_.prefill_batch < 1) throw UsageError("the prefill batch must hold at least one token");
  // Tuning from the environment (docs/llm-gpu.md): NVHCQ_MATVEC_BLOCKS_PER_SM
  // pairs with NVHCQ_KERNEL_DEFINES="MV_MIN_BLOCKS=N".
  if (const auto n = env_integer("NVHCQ_MATVEC_BLOCKS_PER_SM", 1, 32)) {
    options_.matvec_blocks_per_sm = static_cast<int>(*n);
  }
  if (const char* v = std::getenv("NVHCQ_MATVEC_ROWS"); v != nullptr) options_.matvec_rows = v;
  matvec_rows_for(options_.matvec_rows, "");  // (refuses a malformed list now)
  if (const auto n = env_integer("NVHCQ_ATTENTION_HEADS", 0, LLM_ATTN_MAX_GQA)) {
    options_.attention_heads = static_cast<int>(*n);
  }
  if (const auto n = env_integer("NVHCQ_ATTENTION_SPLITS", 0, LLM_ATTN_MAX_SPLITS)) {
    options_.attention_splits = static_cast<int>(*n);
  }
  if (const auto n = env_integer("NVHCQ_ONE_SPLIT_STEP", 0, 1)) options_.one_split_step = *n != 0;
  if (const auto n = env_integer("NVHCQ_SELF_ORDERED_DECODE", 0, 1)) options_.self_ordered_decode = *n ? "on" : "off";
  if (const auto n = env_integer("NVHCQ_DECODE_SCRATCHES", 1, GpuLlamaOptions::kMaxDecodeScratches)) {
    options_.decode_scratches = static_cast<int>(*n);
  }
  if (options_.decode_scratches == -1) {
    options_.decode_scratches = acc_.backend() == "nv" ? GpuLlamaOptions::kDecodeScratchesNv : 1;
  }
  if (options_.decode_scratches < 1 || options_.decode_scratches > GpuLlamaOptions::kMaxDecodeScratches) {
    throw UsageError("a decode step is timed on 1 to " + std::to_string(GpuLlamaOptions::kMaxDecodeScratches) +
                     " scratches, not " + std::to_string(options_.decode_scratches));
  }
  if (options_.self_ordered_decode != "auto" && options_.self_ordered_decode != "on" &&
      options_.self_ordered_decode != "off") {
    throw UsageError("self-ordered decode is 'auto', 'on' or 'off', not '" + options_.self_ordered_decode + "'");
  }
  if (const char* v = std::getenv("NVHCQ_EARLY_LOADS"); v != nullptr && *v) options_.early_loads = v;
  if (options_.early_loads != "auto" && options_.early_loads != "on" && options_.early_loads != "off") {
    throw UsageError("early weight loads are 'auto', 'on' or 'off' (NVHCQ_EARLY_LOADS), not '" +
                     options_.early_loads + "'");
  }
  if (const auto n = env_integer("NVHCQ_DECODE_HANDOFF", 0, 7)) options_.decode_handoff = static_cast<int>(*n);
  if (const auto n = env_integer("NVHCQ_SWIGLU_CLUSTERS", 0, 1)) options_.swiglu_clusters = *n ? "on" : "off";
  if (options_.swiglu_clusters != "auto" && options_.swiglu_clusters != "on" && options_.swiglu_clusters != "off") {
    throw UsageError("gate/up clusters are 'auto', 'on' or 'off' (NVHCQ_SWIGLU_CLUSTERS), not '" +
                     options_.swiglu_clusters + "'");
  }
  if (const auto n = env_integer("NVHCQ_MATVEC_BUILDS", 0, 3)) options_.matvec_builds = static_cast<int>(*n);
  if (const auto n = env_integer("NVHCQ_DECODE_CARVEOUT_KIB", 0, 1024)) {
    options_.decode_carveout_kib = static_cast<int>(*n);
  }
  if (options_.decode_carveout_kib < 0) {
    options_.decode_carveout_kib = acc_.backend() == "nv" && acc_.arch() == "sm_90" ? kDecodeCarveoutKibSm90 : 0;
  }
  if (const auto n = env_integer("NVHCQ_PREFILL_TAIL_SPLIT", 0, 1)) options_.prefill_tail_split = *n != 0;
  if (const auto n = env_integer("NVHCQ_PREFILL_GRAPH", 0, 1)) options_.prefill_graph = *n != 0;
  if (const char* v = std::getenv("NVHCQ_PREFILL_GEMM"); v != nullptr && *v) options_.prefill_gemm = v;
  const bool hopper = kernels::arch_has_wgmma(acc_.arch());
  if (options_.prefill_gemm == "wgmma" && !hopper) {
    throw UsageError("wgmma prefill products need an sm_90 GPU, not " + acc_.arch());
  }
  if (options_.prefill_gemm != "auto" && options_.prefill_gemm != "mma" && options_.prefill_gemm != "wgmma") {
    throw UsageError("the prefill products are 'auto', 'mma' or 'wgmma' (NVHCQ_PREFILL_GEMM), not '" +
                     options_.prefill_gemm + "'");
  }
  prefill_wgmma_ = options_.prefill_gemm == "wgmma" || (options_.prefill_gemm == "auto" && hopper);
  const uint32_t n_gqa = c.n_gqa();
  if (n_gqa > LLM_ATTN_MAX_GQA || n_gqa * c.head_dim > LLM_ATTN_MAX_OUT ||
      (c.head_dim != 64 && c.head_dim != 128 && c.head_dim != 256) ||
      c.n_rot > c.head_dim || c.n_rot % 2 != 0 || c.n_rot / 2 > 128) {
    throw FormatError("the GPU attention kernel does not handle this model's heads (" + c.describe() +
                      "); use --backend cpu");
  }
  // Decode attention blocks: units of attention_heads query heads.
  attention_heads_ = options_.attention_heads == 0 ? static_cast<int>(n_gqa) : options_.attention_heads;
  if (attention_heads_ < 1 || n_gqa % static_cast<uint32_t>(attention_heads_) != 0) {
    throw UsageError("decode attention takes 1 to " + std::to_string(n_gqa) + " query heads per block, a divisor of " +
                     std::to_string(n_gqa) + " (NVHCQ_ATTENTION_HEADS), not " + std::to_string(attention_heads_));
  }
  weights_ = GpuWeights::upload(model.weights(), acc_, pool, progress);

  // KV cache: [layer][kv_head][position][head_dim] f16, keys then values.
  kv_bytes_ = 2ull * c.n_layer * c.n_head_kv * static_cast<uint64_t>(options_.context) * c.head_dim * 2;
  kv_ = acc_.alloc(kv_bytes_);

  // Decode attention: enough blocks per unit to fill the GPU at long contexts
  // (short ones use fewer; see the kernel).
  const int units = static_cast<int>(c.n_head) / attention_heads_;
  splits_ = std::clamp(options_.attention_splits > 0 ? options_.attention_splits
                                                      : static_cast<int>(2 * acc_.sm_count()) / units,
                       1, LLM_ATTN_MAX_SPLITS);

  // The RoPE table holds the CPU path's own cos/sin values for every position.
  const Rope rope(c, model.weights().rope_freq_factors);
  std::vector<float> rope_table(static_cast<size_t>(options_.context) * c.n_rot);
  for (int p = 0; p < options_.context; ++p) rope.angles(p, rope_table.data() + static_cast<size_t>(p) * c.n_rot);
  s_ = std::make_unique<Scratch>();
  scratch_ = allocate_decode_scratch(*s_, rope_table);

  // Batched prefill: every layer matrix has a tensor-core path, in one
  // activation type (bf16 for BF16 weights, f16 otherwise).
  int bf16 = 0, f16 = 0;
  bool gemm_ok = true;
  for (const GpuLayer& l : weights_->layers) {
    for (const GpuMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) {
      if (m->desc.format == kGpuF32 || m->desc.cols % 64 != 0) gemm_ok = false;
      (m->desc.format == kGpuBF16 ? bf16 : f16)++;
    }
  }
  prefill_ok_ = options_.batched_prefill && gemm_ok && (bf16 == 0 || f16 == 0);
  prefill_bf16_ = bf16 > 0;
  if (prefill_ok_) {
    batch_ = s_->allocate_batch(acc_, c, std::min(options_.prefill_batch, options_.context));
  }

  build_decode_step();
  graph_ = capture(step_);
  if (!persistent_ && has_one_split_step()) {
    short_step_ = decode_launches(self_ordered_, 1);
    short_graph_ = capture(short_step_);
  }
  if (!persistent_) choose_decode_step(rope_table);
}

bool GpuLlama::one_split_at(int pos) const {
  // (The token at pos attends to pos + 1 positions.)
  return short_graph_ != nullptr && pos + 1 <= LLM_ATTN_MIN_CHUNK;
}

// Queued launches name this model's kernels and memory: they run before either
// is released (on nv, launches wait in a queue until something submits it).
GpuLlama::~GpuLlama() {
  try {
    acc_.synchronize();
  } catch (const Error& e) {
    log::warn("releasing a GPU model after an error: ", e.what());
  }
}

std::unique_ptr<gpu::Graph> GpuLlama::capture(const std::vector<StepLaunch>& launches) {
  acc_.begin_capture();
  for (const StepLaunch& l : launches) {
    if (l.self_ordered) {
      acc_.launch_self_ordered(*l.kernel, l.args, l.dims);
    } else {
      acc_.launch(*l.kernel, l.args, l.dims);
    }
  }
  return acc_.end_capture();
}

uint64_t GpuLlama::decode_weight_bytes() const {
  auto bytes = [](const GpuMatrix& m) { return gpu_matrix_layout(m.type, m.desc.rows, m.desc.cols).total_bytes(); };
  uint64_t total = bytes(weights_->output);
  for (const GpuLayer& l : weights_->layers) {
    total += bytes(l.wq) + bytes(l.wk) + bytes(l.wv) + bytes(l.wo) + bytes(l.gate) + bytes(l.up) + bytes(l.down);
  }
  return total;
}

void GpuLlama::write_state(int32_t token, int32_t pos) { write_state_at(*scratch_, s_->state, token, pos); }

void GpuLlama::write_state_at(const gpu::DeviceMemory& scratch, uint64_t state, int32_t token, int32_t pos) {
  LlmStepState st{};
  st.token = token;
  st.pos = pos;
  // Not the chain's count: it only grows, which keeps tags unique
  // (llm_tagged.cuh). The trace address is written with the trace.
  acc_.upload(scratch, state - scratch.va(), &st, offsetof(LlmStepState, chain_done));
}

void GpuLlama::launch_all(const std::vector<StepLaunch>& launches) {
  for (const StepLaunch& l : launches) acc_.launch(*l.kernel, l.args, l.dims);
}

void GpuLlama::truncate(int n) {
  if (n < 0 || n > pos_) throw UsageError("truncate: " + std::to_string(n) + " is past the cache's end");
  pos_ = n;
}

void GpuLlama::check_tokens(std::span<const int32_t> tokens, int count) const {
  if (pos_ + static_cast<int64_t>(count) > options_.context) {
    throw UsageError(std::to_string(count) + " tokens at position " + std::to_string(pos_) +
                     " do not fit the GPU context of " + std::to_string(options_.context));
  }
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= config_.n_vocab) {
      throw UsageError("token " + std::to_string(t) + " is outside the vocabulary of " +
                       std::to_string(config_.n_vocab));
    }
  }
}

void GpuLlama::forward(std::span<const int32_t> tokens) {
  if (tokens.empty()) return;
  check_tokens(tokens, static_cast<int>(tokens.size()));
  if (prefill_ok_ && tokens.size() > 1) {
    const size_t batch = static_cast<size_t>(s_->batch_tokens);
    for (size_t first = 0; first < tokens.size(); first += batch) {
      prefill(tokens.subspan(first, std::min(batch, tokens.size() - first)));
    }
    return;
  }
  for (int32_t t : tokens) {
    write_state(t, pos_);
    acc_.replay(graph_at(pos_));
    ++pos_;
  }
}

void GpuLlama::prefill(std::span<const int32_t> tokens) {
  const int n = static_cast<int>(tokens.size());
  acc_.upload(*batch_, s_->batch_token_ids - batch_->va(), tokens.data(), 4ull * n);
  write_state(tokens.back(), pos_);
  if (options_.prefill_graph) {
    // A pass's launches depend on its size only (the position is in the step
    // state), so a graph replays them as one submission on nv and one graph
    // launch on cuda instead of a launch each.
    std::unique_ptr<gpu::Graph>& graph = prefill_graphs_[n];
    if (!graph) {
      std::erase_if(prefill_graphs_, [&](const auto& g) { return g.first != n && g.first != s_->batch_tokens; });
      graph = capture(prefill_launches(n));
    }
    acc_.replay(*graph);
  } else {
    launch_all(prefill_launches(n));
  }
  pos_ += n;
}

void GpuLlama::logits(std::vector<float>& out) {
  out.resize(config_.n_vocab);
  acc_.download(out.data(), *scratch_, s_->logits - scratch_->va(), 4ull * config_.n_vocab);
}

int32_t GpuLlama::greedy_token() {
  if (pos_ == 0) throw UsageError("no token has been run yet");
  int32_t t = 0;
  acc_.download(&t, *scratch_, s_->history - scratch_->va() + 4ull * (pos_ - 1), 4);
  return t;
}

std::vector<int32_t> GpuLlama::generate_greedy(int32_t first, int steps) {
  if (steps <= 0) return {};
  const int32_t one[] = {first};
  check_tokens(one, steps);
  write_state(first, pos_);
  for (int i = 0; i < steps; ++i) acc_.replay(graph_at(pos_ + i));
  std::vector<int32_t> out(static_cast<size_t>(steps));
  acc_.download(out.data(), *scratch_, s_->history - scratch_->va() + 4ull * pos_, 4ull * steps);
  pos_ += steps;
  return out;
}

std::vector<KernelClassTime> GpuLlama::profile_decode(int repeats) {
  if (persistent_) return profile_persistent(repeats);
  std::vector<KernelClassTime> classes;
  std::map<std::string, size_t> index;
  for (const StepLaunch& l : step_) {
    if (index.emplace(l.what, classes.size()).second) classes.push_back(KernelClassTime{l.what, 0, 0.0});
    ++classes[index[l.what]].launches;
  }
  if (repeats <= 0 || pos_ + 1 > options_.context) return classes;
  // Each launch of the step on its own, in stream order: a graph of `repeats`
  // copies, timed on the GPU. Copies of one launch are idempotent enough for
  // timing (the step hand-over advances the position; it is put back afterwards).
  write_state(0, pos_);
  for (const StepLaunch& l : decode_launches(false, one_split_at(pos_) ? 1 : 0)) {
    acc_.begin_capture();
    for (int i = 0; i < repeats; ++i) acc_.launch(*l.kernel, l.args, l.dims);
    std::unique_ptr<gpu::Graph> g = acc_.end_capture();
    acc_.replay(*g);  // warm: code, constants, caches
    const gpu::TimePoint t0 = acc_.record_time();
    acc_.replay(*g);
    const gpu::TimePoint t1 = acc_.record_time();
    acc_.synchronize();
    classes[index[l.what]].microseconds += 1000.0 * acc_.elapsed_ms(t0, t1) / repeats;
    if (l.what == "step") write_state(0, pos_);
  }
  return classes;
}

std::vector<KernelClassTime> GpuLlama::profile_prefill(int n) {
  std::vector<KernelClassTime> classes;
  if (!prefill_ok_ || n < 2 || n > s_->batch_tokens || n > options_.context) return classes;
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) tokens[static_cast<size_t>(i)] = static_cast<int32_t>((7919ull * (i + 1)) % config_.n_vocab);
  pos_ = 0;
  acc_.upload(*batch_, s_->batch_token_ids - batch_->va(), tokens.data(), 4ull * n);
  write_state(tokens.back(), 0);
  const std::vector<StepLaunch> launches = prefill_launches(n);
  std::map<std::string, size_t> index;
  std::vector<gpu::TimePoint> marks{acc_.record_time()};
  for (const StepLaunch& l : launches) {
    if (index.emplace(l.what, classes.size()).second) classes.push_back(KernelClassTime{l.what, 0, 0.0});
    ++classes[index[l.what]].launches;
    acc_.launch(*l.kernel, l.args, l.dims);
    marks.push_back(acc_.record_time());
  }
  acc_.synchronize();
  for (size_t i = 0; i < launches.size(); ++i) {
    classes[index[launches[i].what]].microseconds += 1000.0 * acc_.elapsed_ms(marks[i], marks[i + 1]);
  }
  pos_ = n;
  return classes;
}

}  // namespace nvhcq::llm
