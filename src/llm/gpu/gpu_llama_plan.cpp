// The launches of a decode step and of a prefill batch: which kernels, with
// which jobs (passed by value) and grids.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "base/error.h"
#include "kernels/llm_jobs.cuh"
#include "kernels/llm_matvec_tuning.cuh"
#include "kernels/llm_swiglu_cluster.cuh"
#include "llm/gpu/gpu_llama.h"
#include "llm/gpu/gpu_scratch.h"
#include "llm/gpu/matvec_rows.h"

namespace nvhcq::llm {
namespace {

// Matrix-vector blocks stay within the shared memory every launch may use
// without an opt-in.
constexpr uint32_t kMaxDynamicShared = 48 * 1024;
// Prefill products (llm_gemm_tiles.cuh): threads and weight rows per CTA; and
// per kernel family its tokens per CTA, shared memory and CTAs per SM
// (llm_gemm.cu: GW_BN, GW_SMEM; llm_gemm_wgmma.cu: GwwTile<tokens>::kSmem and
// its launch bounds).
constexpr uint32_t kGemmThreads = 256;
constexpr uint32_t kGemmRows = 128;
struct GemmFamily {
  uint32_t tokens, shared_bytes, ctas_per_sm;
  int wgmma_tokens;  // LlmKernels::gemm's choice (0: mma.sync)
};
constexpr GemmFamily kGemmMma{64, 48 * 1024, 2, 0};
constexpr GemmFamily kGemmWgmma128{128, 3 * 32 * 1024 + 1024, 2, 128};  // GwwTile<128>
constexpr GemmFamily kGemmWgmma256{256, 4 * 48 * 1024 + 1024, 1, 256};  // GwwTile<256>
// Prefill attention (llm_flash_attention.cu): threads, query tokens and keys per tile.
constexpr uint32_t kFlashThreads = 128;
constexpr uint32_t kFlashQueries = 64;
constexpr uint32_t kFlashKeys = 64;

// Whether a decode product takes its early-loading kernel under the
// GpuLlamaOptions::early_loads setting `early`, in a step whose launches are
// self-ordered (`chained`) or not.
bool early_kernel(const std::string& early, const std::vector<const LlmGpuMatrix*>& mats, const std::string& epilogue,
                  int rows_per_warp, bool chained) {
  const int f = one_format(mats);
  const bool mixed = epilogue != "swiglu" && q4k_with_q6k(mats);
  if (early == "off" || epilogue == "logits" || !(mixed || (f >= 0 && llm_mv_early(f, epilogue == "swiglu")))) {
    return false;
  }
  return early == "on" || chained || epilogue != "add" || (f >= 0 && llm_format_16bit(f)) ||
         llm_mv_early_rounds(mats.front()->cols, rows_per_warp) == 1;
}

// Whether a swiglu product of R rows a warp can hand its output over
// (llm_handoff.cuh): a block's round of rows must be a group of 32 (R = 4), or
// half of one in a cluster pair (R = 2; `pair`: the kernel runs in clusters of
// two). One row a warp (8B's gate/up) is not changed to two for it: with two
// and the hand-off (then of Q8_K inputs too), 8B Q4_K_M and Q6_K decoded 1.2%
// and 2.1% slower on the H200 (docs/perf-notes.md).
bool handoff_fits(const LlmGpuMatrix& m, int r, bool pair) {
  return m.rows % LLM_GROUP == 0 &&
         (kMatvecWarps * r == LLM_GROUP || (pair && kMatvecWarps * r == LLM_GROUP / 2));
}

}  // namespace

std::vector<GpuLlama::MatvecGroup> GpuLlama::matvec_groups(const std::vector<const GpuMatrix*>& segments,
                                                           const std::vector<uint64_t>& biases, uint64_t in,
                                                           uint64_t norm, uint64_t out_va, bool swiglu) const {
  // Segments that pair with the same activation format share a job.
  std::vector<MatvecGroup> groups;
  size_t first = 0;
  uint64_t out_at = out_va;
  while (first < segments.size()) {
    const int kind = llm_act_kind(segments[first]->desc.format);
    size_t last = first + 1;
    while (last < segments.size() && llm_act_kind(segments[last]->desc.format) == kind &&
           last - first < LLM_MAX_SEGMENTS) {
      ++last;
    }
    MatvecGroup g{};
    g.act = kind;
    g.first = segments[first];
    LlmMatvecJob& job = g.job;
    job.segments = static_cast<int32_t>(last - first);
    job.cols = segments[first]->desc.cols;
    int32_t rows = 0;
    for (size_t s = first; s < last; ++s) {
      job.m[s - first] = segments[s]->desc;
      job.bias[s - first] = s < biases.size() ? biases[s] : 0;
      if (segments[s]->desc.cols != job.cols) throw FormatError("matrices sharing an input differ in width");
      rows += segments[s]->desc.rows;
    }
    job.rows = swiglu ? segments[first]->desc.rows : rows;
    job.in = in;
    job.norm = norm;
    job.out = out_at;
    job.state = s_->state;
    job.eps = config_.rms_eps;
    job.rows_per_warp = 1;
    groups.push_back(g);
    out_at += 4ull * rows;
    first = last;
  }
  return groups;
}

bool GpuLlama::add_matvec(std::vector<StepLaunch>& out, const std::string& what,
                          const std::vector<const GpuMatrix*>& segments, const std::vector<uint64_t>& biases,
                          uint64_t in, uint64_t norm, uint64_t out_va, const std::string& epilogue,
                          StepChain* chain, int out_handoff, bool in_handoff, int32_t out_tag) const {
  bool handed = false;
  const bool tagged = out_handoff == LLM_HANDOFF_TAGGED;
  if (tagged && (epilogue != "store" || chain == nullptr || !chain->chained())) {
    throw Error("'" + what + "': only a self-ordered store product tags its outputs");
  }
  for (MatvecGroup& g : matvec_groups(segments, biases, in, norm, out_va, epilogue == "swiglu")) {
    LlmMatvecJob& job = g.job;
    std::vector<const LlmGpuMatrix*> descs;
    for (int s = 0; s < job.segments; ++s) descs.push_back(&job.m[s]);
    const uint64_t max_blocks = static_cast<uint64_t>(acc_.sm_count()) * options_.matvec_blocks_per_sm;
    job.rows_per_warp = rows_per_warp(descs, epilogue == "swiglu", static_cast<uint64_t>(job.rows), max_blocks,
                                      matvec_rows_for(options_.matvec_rows, what));
    // (The swiglu_handoff kernels are those of the quantized kinds, the
    // add_handoff kernels those of Q8_0/Q8_1 activations: llm_matvec.cu.)
    // The kernels come from a build of llm_matvec.cu with the job's rows a
    // warp and, where every matrix has one, weight format only, or Q4_K and
    // Q6_K only (GpuLlamaOptions::matvec_builds).
    const int one = one_format(descs);
    const int format = options_.matvec_builds & GpuLlamaOptions::kMatvecBuildFormat
                           ? (one >= 0 ? one : q4k_with_q6k(descs) ? kMvBuildQ4KQ6K : 0)
                           : 0;
    const int build_rows = options_.matvec_builds & GpuLlamaOptions::kMatvecBuildRows ? job.rows_per_warp : 0;
    // (The add kernels carry no code for a norm: llm_matvec.cu's mv_prepare.)
    if (epilogue == "add" && norm != 0) throw Error("'" + g.first->name + "': an add product's input has no norm");
    if (in_handoff && (epilogue != "add" || (g.act != kActQ8x32 && g.act != kActQ8K))) {
      throw Error("'" + g.first->name + "': no kernel takes this input handed over");
    }
    const bool quantized = g.act == kActQ8x32 || g.act == kActQ8K;
    if (tagged) {  // (8 bytes a row: the groups' outputs are twice as far apart)
      job.out_handoff = LLM_HANDOFF_TAGGED;
      job.out_tag = out_tag;
      job.out = out_va + 2 * (job.out - out_va);
      handed = true;
    }
    if (epilogue == "swiglu" && out_handoff != LLM_HANDOFF_NONE && quantized) {
      const bool pair = kernels_.matvec(g.act, epilogue, format, build_rows).cluster_blocks() == 2;
      if (handoff_fits(job.m[0], job.rows_per_warp, pair)) {
        job.out_handoff = out_handoff;
        handed = true;
      }
    }
    uint32_t smem = llm_act_smem_bytes(g.act, job.cols);
    if (smem > kMaxDynamicShared) {
      throw FormatError("'" + g.first->name + "': rows of " + std::to_string(job.cols) + " " +
                        act_kind_name(g.act) + " activations exceed the GPU kernel's shared memory");
    }
    const bool early = chain != nullptr &&
                       early_kernel(options_.early_loads, descs, epilogue, job.rows_per_warp, chain->chained());
    // (An add product's input handed over, or a swiglu product handing its
    // output over: kernels of their own, llm_matvec.cu. A store kernel tags
    // its outputs where the job says so.)
    const bool handoff = in_handoff || (job.out_handoff != LLM_HANDOFF_NONE && !tagged);
    const std::string name = epilogue + (handoff ? "_handoff" : "") + (early ? "_early" : "");
    const gpu::Kernel& kernel = kernels_.matvec(g.act, name, format, build_rows);
    gpu::LaunchDims d;
    d.block[0] = kMatvecThreads;
    const uint64_t tasks = static_cast<uint64_t>(job.rows) / job.rows_per_warp;
    // Whole thread-block clusters where the kernel runs in clusters
    // (llm_matvec.cu); a block past the rows only helps prepare the input.
    const uint64_t cluster = kernel.cluster_blocks();
    d.grid[0] = static_cast<uint32_t>((matvec_blocks(tasks, max_blocks) + cluster - 1) / cluster * cluster);
    if (job.out_handoff != LLM_HANDOFF_NONE) {  // the staged outputs after the activations
      job.stage_at = static_cast<int32_t>((smem + 15) / 16 * 16);
      const int rounds = llm_swiglu_stage_rounds(static_cast<int>(tasks), static_cast<int>(d.grid[0] * kMatvecWarps));
      smem = static_cast<uint32_t>(job.stage_at) +
             llm_swiglu_stage_bytes(rounds, static_cast<int>(kMatvecWarps) * job.rows_per_warp);
      if (smem > kMaxDynamicShared) throw FormatError("'" + g.first->name + "': too many rows to hand over");
    }
    if (early && epilogue == "swiglu" && (g.act == kActF16 || g.act == kActBF16)) {
      // The staged first rounds (llm_matvec.cu's staged_swiglu_rows), after
      // the activations (unused by a build with MV_PLAIN_STAGE=0).
      job.stage_at = static_cast<int32_t>((smem + 127) / 128 * 128);
      smem = static_cast<uint32_t>(job.stage_at) +
             static_cast<uint32_t>(llm_mv_plain_stage_bytes(job.rows_per_warp, static_cast<int>(kMatvecWarps)));
    }
    d.dynamic_shared_bytes = smem;
    if (chain != nullptr) job.chain = chain->next(d);
    out.push_back(StepLaunch{what, &kernel, gpu::KernelArgs().add(job), d, chain != nullptr && chain->chained()});
  }
  return handed;
}

int GpuLlama::add_gemm(std::vector<StepLaunch>& out, const std::string& what,
                       const std::vector<const GpuMatrix*>& w, const std::vector<uint64_t>& biases, uint64_t x,
                       uint64_t y, int ldy, int n, const std::string& epilogue, bool defer_split_sum) const {
  int deferred = 0;
  const bool swiglu = epilogue == "swiglu";
  // The smallest token tile that takes the batch in one row of CTAs, 256 at
  // most (on the H200, 256-token tiles beat 128 at every pp512 model: fewer
  // passes over the weights; docs/perf-notes.md).
  const uint32_t tokens = static_cast<uint32_t>(n);
  const GemmFamily& family = !prefill_wgmma_ || tokens <= kGemmMma.tokens ? kGemmMma
                             : tokens <= kGemmWgmma128.tokens             ? kGemmWgmma128
                                                                          : kGemmWgmma256;
  // Matrices share a launch when every one but the last fills whole tiles.
  size_t first = 0;
  uint64_t y_at = y;
  while (first < w.size()) {
    size_t last = first + 1;
    if (swiglu) {
      last = w.size();
    } else {
      while (last < w.size() && last - first < LLM_MAX_SEGMENTS && w[last - 1]->desc.rows % kGemmRows == 0) ++last;
    }
    LlmGemmJob job{};
    job.segments = static_cast<int32_t>(last - first);
    uint32_t rows = 0;
    for (size_t i = first; i < last; ++i) {
      job.w[i - first] = w[i]->desc;
      job.bias[i - first] = i < biases.size() ? biases[i] : 0;
      rows += static_cast<uint32_t>(w[i]->desc.rows);
    }
    job.x = x;
    job.y = y_at;
    job.n_tokens = n;
    job.ldy = ldy;
    gpu::LaunchDims d;
    d.block[0] = kGemmThreads;
    // Token tiles vary fastest: the CTAs that share a weight tile run together,
    // so each weight row comes from memory once (a layer's matrices outgrow L2).
    d.grid[0] = (static_cast<uint32_t>(n) + family.tokens - 1) / family.tokens;
    if (swiglu) {
      d.grid[1] = (static_cast<uint32_t>(w[0]->desc.rows) + kGemmRows / 2 - 1) / (kGemmRows / 2);
    } else {
      // Every segment but the last is whole tiles, so the tiles add up.
      d.grid[1] = (rows + kGemmRows - 1) / kGemmRows;
    }
    if (epilogue == "add" && last - first == 1) {
      // Tiles that fill the GPU's CTA slots less than half: split K among CTAs
      // (as many shares as fit in one wave, at least four k-tiles each), their
      // partial products summed in order afterwards.
      const uint32_t tiles = d.grid[0] * d.grid[1], slots = family.ctas_per_sm * acc_.sm_count();
      const uint32_t k_tiles = static_cast<uint32_t>(w[first]->desc.cols) / 64;
      d.grid[2] = std::clamp<uint32_t>(slots / tiles, 1,
                                       std::min<uint32_t>(std::max<uint32_t>(k_tiles / 4, 1), Scratch::kMaxKSplits));
      if (static_cast<uint64_t>(d.grid[2]) * n * rows * 4 > s_->batch_partial_bytes) d.grid[2] = 1;
    }
    job.partial = s_->batch_partial;
    bool quantized = false;
    for (size_t i = first; i < last; ++i) quantized = quantized || !llm_format_16bit(w[i]->desc.format);
    if (family.wgmma_tokens != 0 && epilogue != "add" && quantized && options_.prefill_tail_split) {
      // A last wave of whole tiles on less than half of the CTA slots: its
      // tiles as pairs of half tiles (LlmGemmJob::tail_pairs), which take half
      // as long on twice as many SMs. Each half's accumulators make a round
      // trip through L2: against half a mainloop of dequantized tiles that is
      // a gain, against f16/bf16 tiles copied as they are it was not (1B F16
      // Q/K/V 6% slower). Add products split K over the grid instead.
      const uint32_t tiles = d.grid[0] * d.grid[1], slots = family.ctas_per_sm * acc_.sm_count();
      const uint32_t whole = tiles / slots * slots, tail = tiles - whole;
      const uint64_t half_bytes = 4ull * kGemmThreads * family.tokens / 2;
      if (tail > 0 && 2 * tail <= slots && tail <= static_cast<uint32_t>(Scratch::kMaxTailPairs) &&
          2 * tail * half_bytes <= s_->batch_partial_bytes) {
        job.tail_pairs = static_cast<int32_t>(tail);
        job.tail_partial = s_->batch_partial;
        job.tail_counts = s_->batch_tail_counts;
        d.grid[0] = whole + 2 * tail;
        d.grid[1] = 1;
      }
    }
    d.dynamic_shared_bytes = family.shared_bytes;
    out.push_back(StepLaunch{what, &kernels_.gemm(prefill_bf16_, epilogue, family.wgmma_tokens), gpu::KernelArgs().add(job), d});
    if (d.grid[2] > 1 && defer_split_sum) {
      deferred = static_cast<int>(d.grid[2]);
    } else if (d.grid[2] > 1) {
      gpu::LaunchDims rd;
      rd.block[0] = 256;
      rd.grid[0] = 2 * acc_.sm_count();
      out.push_back(StepLaunch{what, &kernels_.add_partials(),
                               gpu::KernelArgs().ptr(y_at).add(ldy).ptr(s_->batch_partial)
                                   .add(static_cast<int32_t>(d.grid[2])).add(n).add(static_cast<int32_t>(rows)),
                               rd});
    }
    y_at += 4ull * rows;
    first = last;
  }
  return deferred;
}

namespace {

LlmAttentionJob attention_job(const ModelConfig& c, uint64_t k_cache, uint64_t v_cache, int context, int splits) {
  LlmAttentionJob j{};
  j.k_cache = k_cache;
  j.v_cache = v_cache;
  j.n_head = static_cast<int32_t>(c.n_head);
  j.n_kv = static_cast<int32_t>(c.n_head_kv);
  j.head_dim = static_cast<int32_t>(c.head_dim);
  j.n_rot = static_cast<int32_t>(c.n_rot);
  j.capacity = context;
  j.neox = c.rope_style == RopeStyle::kNeox ? 1 : 0;
  j.splits = splits;
  j.heads_per_block = static_cast<int32_t>(c.n_gqa());
  j.qkv_stride = static_cast<int32_t>(c.q_dim() + 2 * c.kv_dim());
  j.out_stride = static_cast<int32_t>(c.q_dim());
  j.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  return j;
}

}  // namespace

LlmAttentionJob GpuLlama::decode_attention_job(size_t layer, int splits) const {
  const uint64_t layer_kv = 2ull * config_.n_head_kv * static_cast<uint64_t>(options_.context) * config_.head_dim * 2;
  const uint64_t k_cache = kv_->va() + layer * layer_kv;
  LlmAttentionJob aj = attention_job(config_, k_cache, k_cache + layer_kv / 2, options_.context, splits);
  aj.qkv = s_->qkv;
  aj.out = s_->attn;
  aj.rope = s_->rope;
  aj.state = s_->state;
  aj.partial = s_->partial;
  aj.counters = s_->counters;
  aj.append = 1;
  aj.heads_per_block = attention_heads_;
  return aj;
}

void GpuLlama::build_decode_step() {
  step_.clear();
  persistent_ = false;
  persistent_refusal_ = options_.persistent_decode ? build_persistent_step() : "not asked for";
  if (persistent_refusal_.empty()) {
    persistent_ = true;
    step_.push_back(StepLaunch{"step", &kernels_.decode_step(), gpu::KernelArgs().add(step_params_), persistent_dims()});
    return;
  }
  self_ordered_ = options_.self_ordered_decode != "off";
  step_ = decode_launches(self_ordered_);
}

bool GpuLlama::tags_qkv(bool chained) const {
  // (The grouped attention kernel reads f32 values.)
  return chained && attention_heads_ == 1 && (options_.decode_handoff & GpuLlamaOptions::kHandoffAttention) != 0;
}

int GpuLlama::handoff_for(const GpuMatrix& m, int which) const {
  // (A 16-bit input's preparation is a copy already: llm_handoff.cuh.)
  if ((options_.decode_handoff & which) == 0) return LLM_HANDOFF_NONE;
  const int act = llm_act_kind(m.desc.format);
  if (act == kActQ8x32) return LLM_HANDOFF_Q8X32;
  // Q8_K super-blocks only from the attention, where 256 / head_dim heads make
  // a thread-block cluster (sm_90 and newer) or one head holds a super-block.
  const uint32_t hd = config_.head_dim;
  const bool clusters = sm_version(acc_.arch()) >= 0x900;
  const bool fits = hd == 256 || ((hd == 64 || hd == 128) && clusters && config_.n_head % (256 / hd) == 0);
  return act == kActQ8K && which == GpuLlamaOptions::kHandoffWo && fits ? LLM_HANDOFF_Q8K : LLM_HANDOFF_NONE;
}

int GpuLlama::swiglu_cluster(const GpuLayer& L, bool chained) const {
  if (options_.swiglu_clusters == "off" || (options_.decode_handoff & GpuLlamaOptions::kHandoffDown) == 0 ||
      sm_version(acc_.arch()) < 0x900) {
    return 0;
  }
  const int gate = L.gate.desc.format;
  if ((gate != kGpuQ4_K && gate != kGpuQ6_K) || L.up.desc.format != gate ||
      llm_act_kind(L.down.desc.format) != kActQ8K || config_.n_ff % LLM_SUPER != 0 ||
      llm_swiglu_cluster_smem_bytes(static_cast<int>(config_.n_embd)) > kMaxDynamicShared) {
    return 0;
  }
  return swiglu_cluster_size(options_.swiglu_clusters, chained, config_.n_ff / LLM_SUPER,
                             static_cast<uint64_t>(acc_.sm_count()) * LLM_SWIGLU_CLUSTER_BLOCKS_PER_SM);
}

void GpuLlama::add_swiglu_cluster(std::vector<StepLaunch>& out, const GpuLayer& L, int cluster,
                                  StepChain& chain) const {
  const ModelConfig& c = config_;
  LlmMatvecJob job{};
  job.m[0] = L.gate.desc;
  job.m[1] = L.up.desc;
  job.segments = 2;
  job.cols = static_cast<int32_t>(c.n_embd);
  job.rows = static_cast<int32_t>(c.n_ff);
  job.in = s_->x;
  job.norm = L.ffn_norm;
  job.out = s_->h;  // (kActQ8K's layout of n_ff values: less than n_ff floats)
  job.state = s_->state;
  job.eps = c.rms_eps;  // (the rows a warp are the kernel's own: swiglu_q8k_handoff_c<cluster>)
  gpu::LaunchDims d;
  d.block[0] = LLM_SWIGLU_CLUSTER_THREADS;
  d.grid[0] = static_cast<uint32_t>(c.n_ff / LLM_SUPER) * static_cast<uint32_t>(cluster);
  d.dynamic_shared_bytes = llm_swiglu_cluster_smem_bytes(job.cols);
  job.chain = chain.next(d);
  out.push_back(
      StepLaunch{"ffn_gate_up", &kernels_.swiglu_cluster(cluster), gpu::KernelArgs().add(job), d, chain.chained()});
}

std::vector<StepLaunch> GpuLlama::decode_launches(bool chained, int splits) const {
  if (splits <= 0) splits = splits_;
  const ModelConfig& c = config_;
  const GpuWeights& w = *weights_;
  std::vector<StepLaunch> step;
  StepChain chain(chained);
  auto add = [&](const std::string& what, const gpu::Kernel& kernel, const gpu::KernelArgs& args,
                 const gpu::LaunchDims& dims) { step.push_back(StepLaunch{what, &kernel, args, dims, chained}); };
  gpu::LaunchDims one_block;
  one_block.block[0] = 256;
  add("embed", kernels_.embed_tokens(),
      gpu::KernelArgs().add(w.token_embd.desc).ptr(s_->state + offsetof(LlmStepState, token)).add(1).ptr(s_->x)
          .add(chain.next(one_block)).ptr(s_->state),
      one_block);
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const GpuLayer& L = w.layers[l];
    // In a self-ordered step the Q/K/V launch tags its outputs for the
    // attention (llm_tagged.cuh) with one more than the blocks ahead of it.
    const bool tagged = tags_qkv(chained);
    const int32_t qkv_tag = chain.blocks() + 1;
    add_matvec(step, "qkv", {&L.wq, &L.wk, &L.wv}, {L.bq, L.bk, L.bv}, s_->x, L.attn_norm,
               tagged ? s_->qkv_tagged : s_->qkv, "store", &chain, tagged ? LLM_HANDOFF_TAGGED : LLM_HANDOFF_NONE,
               false, qkv_tag);

    LlmAttentionJob aj = decode_attention_job(l, splits);
    if (tagged) {
      aj.qkv = s_->qkv_tagged;
      aj.qkv_tag = qkv_tag;
    }
    // (The grouped attention kernel stores plain outputs.)
    aj.out_handoff = attention_heads_ == 1 ? handoff_for(L.wo, GpuLlamaOptions::kHandoffWo) : LLM_HANDOFF_NONE;
    gpu::LaunchDims ad;
    ad.block[0] = attention_heads_ == 1 ? LLM_ATTN_DECODE_THREADS : LLM_ATTN_THREADS;
    ad.grid[0] = c.n_head / static_cast<uint32_t>(attention_heads_);
    ad.grid[1] = static_cast<uint32_t>(splits);
    aj.chain = chain.next(ad);
    const gpu::Kernel& attention = attention_heads_ != 1                 ? kernels_.attention()
                                   : aj.out_handoff == LLM_HANDOFF_Q8K   ? kernels_.attention_head_handoff_q8k(aj.head_dim)
                                   : aj.out_handoff == LLM_HANDOFF_Q8X32 ? kernels_.attention_head_handoff()
                                                                         : kernels_.attention_head();
    add("attention", attention, gpu::KernelArgs().add(aj), ad);

    add_matvec(step, "wo", {&L.wo}, {}, s_->attn, 0, s_->x, "add", &chain, LLM_HANDOFF_NONE,
               aj.out_handoff != LLM_HANDOFF_NONE);
    bool down_handoff = false;
    if (const int cluster = swiglu_cluster(L, chained)) {
      add_swiglu_cluster(step, L, cluster, chain);
      down_handoff = true;
    } else if (llm_act_kind(L.gate.desc.format) == llm_act_kind(L.up.desc.format)) {
      down_handoff = add_matvec(step, "ffn_gate_up", {&L.gate, &L.up}, {}, s_->x, L.ffn_norm, s_->h, "swiglu",
                                &chain, handoff_for(L.down, GpuLlamaOptions::kHandoffDown));
    } else {
      add_matvec(step, "ffn_gate_up", {&L.gate}, {}, s_->x, L.ffn_norm, s_->gate, "store", &chain);
      add_matvec(step, "ffn_gate_up", {&L.up}, {}, s_->x, L.ffn_norm, s_->up, "store", &chain);
      gpu::LaunchDims sd;
      sd.block[0] = 256;
      sd.grid[0] = (c.n_ff + 255) / 256;
      add("ffn_gate_up", kernels_.swiglu(),
          gpu::KernelArgs().ptr(s_->gate).ptr(s_->up).ptr(s_->h).add(static_cast<int32_t>(c.n_ff))
              .add(chain.next(sd)).ptr(s_->state),
          sd);
    }
    add_matvec(step, "ffn_down", {&L.down}, {}, s_->h, 0, s_->x, "add", &chain, LLM_HANDOFF_NONE, down_handoff);
  }
  add_matvec(step, "logits", {&w.output}, {}, s_->x, w.output_norm, s_->logits, "logits", &chain);
  gpu::LaunchDims fd;
  add("step", kernels_.finish_step(), gpu::KernelArgs().ptr(s_->state).ptr(s_->history).add(1).add(chain.next(fd)),
      fd);
  for (StepLaunch& l : step) l.dims.min_carveout_kib = static_cast<uint32_t>(options_.decode_carveout_kib);
  return step;
}

std::vector<StepLaunch> GpuLlama::prefill_launches(int n) const {
  const ModelConfig& c = config_;
  const GpuWeights& w = *weights_;
  std::vector<StepLaunch> out;
  const int d_model = static_cast<int>(c.n_embd), q_dim = static_cast<int>(c.q_dim());
  const int kv_dim = static_cast<int>(c.kv_dim()), ff = static_cast<int>(c.n_ff);
  const int qkv_ld = q_dim + 2 * kv_dim;
  const int bf16 = prefill_bf16_ ? 1 : 0;

  gpu::LaunchDims per_token;
  per_token.grid[0] = static_cast<uint32_t>(n);
  per_token.block[0] = 256;
  out.push_back(StepLaunch{"embed", &kernels_.embed_tokens(),
                           gpu::KernelArgs().add(w.token_embd.desc).ptr(s_->batch_token_ids).add(n).ptr(s_->batch_x)
                               .add(LlmChainLink{}).ptr(s_->state),
                           per_token});
  const uint64_t layer_kv = 2ull * c.n_head_kv * static_cast<uint64_t>(options_.context) * c.head_dim * 2;
  // An add product into the residual stream that split K leaves its partial
  // products for the RMSNorm after it to add (one launch and one pass over the
  // stream fewer); the last layer's down product, followed by the logits, adds
  // them itself.
  int pending_splits = 0;
  gpu::LaunchDims norm_dims = per_token;
  norm_dims.block[0] = LLM_NORM_THREADS;
  auto norm = [&](uint64_t weight) {
    gpu::KernelArgs args = gpu::KernelArgs().ptr(s_->batch_x).ptr(weight).ptr(s_->batch_xn).add(d_model)
                               .add(c.rms_eps).add(bf16);
    if (pending_splits > 1) {
      args.ptr(s_->batch_partial).add(pending_splits).add(n);
      out.push_back(StepLaunch{"norm", &kernels_.add_splits_rmsnorm_rows(), args, norm_dims});
    } else {
      out.push_back(StepLaunch{"norm", &kernels_.rmsnorm_rows(), args, norm_dims});
    }
    pending_splits = 0;
  };
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const GpuLayer& L = w.layers[l];
    norm(L.attn_norm);
    add_gemm(out, "qkv", {&L.wq, &L.wk, &L.wv}, {L.bq, L.bk, L.bv}, s_->batch_xn, s_->batch_qkv, qkv_ld, n, "store");

    LlmAttentionJob aj = attention_job(c, kv_->va() + l * layer_kv, kv_->va() + l * layer_kv + layer_kv / 2,
                                       options_.context, 1);
    aj.qkv = s_->batch_qkv;
    aj.out = s_->batch_attn;
    aj.out_f16 = prefill_bf16_ ? 2 : 1;  // the next product's input type
    aj.rope = s_->rope;
    aj.state = s_->state;
    aj.append = 0;
    gpu::LaunchDims kv_store;
    kv_store.grid[0] = static_cast<uint32_t>(n);
    kv_store.block[0] = LLM_ATTN_THREADS;
    out.push_back(StepLaunch{"attention", &kernels_.rope_kv_store(), gpu::KernelArgs().add(aj), kv_store});
    aj.n_tokens = n;
    if (c.head_dim == 64 || c.head_dim == 128) {
      // Tensor-core attention: 64 query tokens of one head per block.
      gpu::LaunchDims fd;
      fd.block[0] = kFlashThreads;
      fd.grid[0] = (static_cast<uint32_t>(n) + kFlashQueries - 1) / kFlashQueries;
      fd.grid[1] = c.n_head;
      fd.dynamic_shared_bytes = 2 * kFlashKeys * c.head_dim * 2;  // a K and a V tile, f16
      out.push_back(StepLaunch{"attention", &kernels_.flash_prefill(static_cast<int>(c.head_dim)),
                               gpu::KernelArgs().add(aj), fd});
    } else {
      gpu::LaunchDims ad;
      ad.block[0] = LLM_ATTN_THREADS;
      ad.grid[0] = c.n_head_kv;
      ad.grid[2] = static_cast<uint32_t>(n);
      out.push_back(StepLaunch{"attention", &kernels_.attention(), gpu::KernelArgs().add(aj), ad});
    }

    pending_splits = add_gemm(out, "wo", {&L.wo}, {}, s_->batch_attn, s_->batch_x, d_model, n, "add", true);
    norm(L.ffn_norm);
    add_gemm(out, "ffn_gate_up", {&L.gate, &L.up}, {}, s_->batch_xn, s_->batch_h, ff, n, "swiglu");
    pending_splits = add_gemm(out, "ffn_down", {&L.down}, {}, s_->batch_h, s_->batch_x, d_model, n, "add",
                              l + 1 < w.layers.size());
  }
  add_matvec(out, "logits", {&w.output}, {}, s_->batch_x + 4ull * (n - 1) * d_model, w.output_norm, s_->logits,
             "logits");
  gpu::LaunchDims fd;
  out.push_back(StepLaunch{"step", &kernels_.finish_step(),
                           gpu::KernelArgs().ptr(s_->state).ptr(s_->history).add(n).add(LlmChainLink{}), fd});
  return out;
}

}  // namespace nvhcq::llm
