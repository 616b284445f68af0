#pragma once
// A LLaMA-family model on the GPU (either Accelerator: nv or cuda). Weights are
// uploaded once, the KV cache and every scratch vector live on the GPU.
//
// Decode: a step is a recorded sequence of launches (embedding, five fused
// kernels per layer, logits with argmax, step hand-over) or, when asked on
// sm_90 and newer, one launch of the persistent step kernel
// (kernels/llm_decode_step.cu: the same phases in one launch, weights streamed
// into shared memory ahead of use; not yet the faster, docs/perf-notes.md).
// Either is captured as a graph and replayed. The token and position live in device memory (LlmStepState) and the
// step itself advances them, so one graph serves every step and greedy decoding
// runs many steps without the host in between.
//
// Prefill: a prompt runs in batches through tensor-core products (llm_gemm.cu)
// whose weight tiles are dequantized in shared memory; the last token's logits
// come from the decode logits kernel.

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cpu/thread_pool.h"
#include "gpu/accelerator.h"
#include "llm/gpu/gpu_weights.h"
#include "kernels/llm_jobs.cuh"
#include "llm/gpu/llm_kernels.h"
#include "llm/gpu/step_timeline.h"
#include "llm/model/llama_model.h"

namespace nvhcq::llm {

struct GpuLlamaOptions {
  int context = 4096;         // KV cache positions
  int attention_splits = 0;   // decode attention blocks per unit of query heads (0: from the SM count)
  // Query heads per decode attention block: a divisor of the model's query
  // heads per KV head, 0 for all of them (one block per KV head).
  int attention_heads = 1;
  // Whether tokens whose context fits one attention split's chunk
  // (LLM_ATTN_MIN_CHUNK positions) are run by a step launched with one split
  // (GpuLlama::short_step_; NVHCQ_ONE_SPLIT_STEP=0 turns it off, for
  // measurements): the same bits either way.
  bool one_split_step = true;
  int matvec_blocks_per_sm = 2;
  // Rows a warp for named decode products, for measurements ("wo:2,qkv:4";
  // NVHCQ_MATVEC_ROWS; matvec_rows.h): a count replaces the plan's where it
  // divides every matrix's rows and a pipelined round stays within a row.
  // Empty: the plan's.
  std::string matvec_rows;
  // Which builds of llm_matvec.cu the decode products take their kernels from
  // (LlmKernels::matvec), a mask: 1 one weight format (where the product has
  // one), 2 its rows a warp; 0 the build that holds every product.
  // NVHCQ_MATVEC_BUILDS overrides it.
  static constexpr int kMatvecBuildFormat = 1, kMatvecBuildRows = 2;
  int matvec_builds = kMatvecBuildFormat | kMatvecBuildRows;
  int prefill_batch = 512;    // tokens per prefill pass
  // Run prompts through the batched tensor-core path (when every matrix of the
  // model has one); otherwise, or when false, token by token like decode.
  bool batched_prefill = true;
  // Prefill products: "wgmma" (Hopper's warpgroup instructions, sm_90 only),
  // "mma" (mma.sync, any GPU), or "auto": wgmma where the GPU has it, for
  // batches of more than one mma token tile (64 tokens).
  std::string prefill_gemm = "auto";
  // Quantized wgmma store and swiglu products whose last wave of CTAs would be
  // less than half full run its tiles as two halves of k each, summed before
  // the epilogue (NVHCQ_PREFILL_TAIL_SPLIT=1|0).
  bool prefill_tail_split = true;
  // Prefill passes replayed from a graph captured once per batch size (true),
  // or launched one by one (NVHCQ_PREFILL_GRAPH=1|0).
  bool prefill_graph = true;
  // Decode with the persistent step kernel where the GPU and the model allow
  // (true), or with one launch per fused kernel (false: today the faster).
  bool persistent_decode = false;
  // Decode launches that order themselves in memory (kernels/llm_chain.cuh),
  // each starting while the one before it drains: "on", "off", or "auto" (both
  // orders timed when the model is loaded, the faster kept: self-ordered wins
  // where a step is many short launches, docs/perf-notes.md).
  std::string self_ordered_decode = "auto";
  // Decode scratches (the step's work buffers, GpuLlama::Scratch) a
  // self-ordered step is timed on when the model is loaded, each a separate
  // allocation, the fastest kept: 1 to 8, or -1 for the measured choice: 8 on
  // nv, 1 elsewhere (the cuda backend keeps its stream-ordered step, and
  // timing more self-ordered ones only made its loads longer).
  // NVHCQ_DECODE_SCRATCHES overrides it. Where the step state's counter and
  // the vectors every block reads land in memory moved 8B Q4_K_M decode on
  // the H200 by up to 1.5%, in no order a layout rule could follow; the best
  // of eight decoded it 0.55-0.6% faster than the first alone on three H200s,
  // the best of four no faster. Each candidate adds six rounds of up to eight
  // steps (about 16 ms a round) to the load (docs/perf-notes.md).
  static constexpr int kMaxDecodeScratches = 8, kDecodeScratchesNv = 8;
  int decode_scratches = -1;
  // Matrix-vector products whose warps load their first weights before the
  // block waits for the launches ahead and prepares its activations
  // (llm_matvec.cu's matvec_early): "on" wherever a kernel has the weights'
  // format, "off", or "auto": all of those in a self-ordered step; in a
  // stream-ordered one (where the loads overlap the preparation only) all but
  // quantized products that add into the residual (Wo, down) with rows of more
  // than one round a warp -- 8B's Wo and down, rows of two to four rounds,
  // decoded faster early when self-ordered and slower when not on the H200
  // (NVHCQ_EARLY_LOADS; docs/perf-notes.md).
  std::string early_loads = "auto";
  // Decode launches whose output is an add product's input quantize it once
  // for that product's blocks to copy, where its activations are quantized
  // (llm_handoff.cuh): a mask of the products, attention for Wo and gate/up
  // for down; and in a self-ordered step the Q/K/V launch tags its outputs
  // for the attention, which then waits for those values only
  // (kHandoffAttention, llm_tagged.cuh). NVHCQ_DECODE_HANDOFF; 0 for none.
  static constexpr int kHandoffWo = 1, kHandoffDown = 2, kHandoffAttention = 4;
  int decode_handoff = kHandoffWo | kHandoffDown | kHandoffAttention;
  // Gate/up handing its output to down as Q8_K super-blocks from thread-block
  // clusters that each own one (llm_swiglu_cluster.cu), where decode_handoff
  // has kHandoffDown, the GPU is sm_90 or newer, gate and up are Q4_K or Q6_K
  // rows of one format, down's activations are Q8_K and n_ff is a multiple of
  // 256: "on" wherever that holds (clusters of eight where they fit in the
  // GPU's block slots, else of four), "off", or "auto": in a self-ordered step,
  // clusters of four where they fill three quarters of the slots or more
  // (8B: 224 blocks of the H200's 264). On the H200 8B Q4_K_M decoded 0.25%
  // and 8B Q6_K 1.4% faster so, with the same tokens; 1B Q6_K in clusters of
  // eight 16% slower (NVHCQ_SWIGLU_CLUSTERS=1|0; docs/perf-notes.md).
  std::string swiglu_clusters = "auto";
  // The SM carve-out (KiB of shared memory) every launch of a decode step asks
  // for at least (gpu::LaunchDims::min_carveout_kib): 0 for each launch's own,
  // or -1 for the measured choice: 196 on nv and sm_90, where decode was
  // faster than with the 32-64 KiB its launches want or with 228; 0 elsewhere
  // (CUDA's carve-out preference made some models faster, others slower;
  // docs/perf-notes.md). NVHCQ_DECODE_CARVEOUT_KIB overrides it.
  int decode_carveout_kib = -1;
  // Kernels that stamp the timeline of a self-ordered step (built with
  // LLM_TRACE, for decode_timeline and `nvhcq bench --timeline`; the stamps
  // cost a little time).
  bool trace_decode = false;
};

// The SM version of an NVRTC target name ("sm_90" -> 0x900), 0 if unknown.
inline uint32_t sm_version(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return 0;
  const int v = std::atoi(arch.c_str() + 3);
  return static_cast<uint32_t>((v / 10) << 8 | (v % 10));
}

// One launch, named by what it computes (for --profile).
struct StepLaunch {
  std::string what;  // "embed", "qkv", "attention", "wo", "ffn_gate_up", "ffn_down", "logits", "step", ...
  const gpu::Kernel* kernel;
  gpu::KernelArgs args;
  gpu::LaunchDims dims;
  bool self_ordered = false;  // queued with Accelerator::launch_self_ordered
};

// Gives the launches of a decode step their LlmChainLink as they are added:
// each waits for the blocks of the ones before it. Not chained: all zero.
class StepChain {
 public:
  explicit StepChain(bool chained) : chained_(chained) {}
  bool chained() const { return chained_; }
  LlmChainLink next(const gpu::LaunchDims& d) {
    const LlmChainLink link{chained_ ? 1 : 0, chained_ ? blocks_ : 0};
    blocks_ += static_cast<int32_t>(d.blocks());
    return link;
  }
  // The blocks of the launches so far.
  int32_t blocks() const { return blocks_; }

 private:
  bool chained_;
  int32_t blocks_ = 0;
};

struct KernelClassTime {
  std::string what;
  int launches = 0;
  double microseconds = 0.0;  // per decode step, summed over the class's launches
};

class GpuLlama {
 public:
  GpuLlama(const LlamaModel& model, gpu::Accelerator& acc, cpu::ThreadPool& pool,
           const GpuLlamaOptions& options = {}, const std::function<void(double)>& progress = {});
  ~GpuLlama();
  GpuLlama(const GpuLlama&) = delete;
  GpuLlama& operator=(const GpuLlama&) = delete;

  const ModelConfig& config() const { return config_; }
  gpu::Accelerator& accelerator() { return acc_; }
  int context() const { return options_.context; }
  // Positions the KV cache holds.
  int position() const { return pos_; }
  // Forgets the cache (the next token goes to position 0).
  void reset() { pos_ = 0; }
  // Drops positions from n on.
  void truncate(int n);
  // Whether prompts take the batched tensor-core path.
  bool batched_prefill() const { return prefill_ok_; }

  // Runs `tokens` at positions position() onwards; the last one's logits stay on
  // the GPU for logits() and greedy_token(). UsageError when they do not fit the
  // context or a token is outside the vocabulary (nothing runs then).
  void forward(std::span<const int32_t> tokens);
  // The logits of the last token run (n_vocab floats).
  void logits(std::vector<float>& out);
  // Their argmax (the greedy choice), computed on the GPU.
  int32_t greedy_token();
  // Greedy decoding on the GPU: feeds `first`, then each chosen token, for
  // `steps` steps without the host in between; returns the chosen tokens.
  std::vector<int32_t> generate_greedy(int32_t first, int steps);

  // Device memory: weights, KV cache, everything.
  uint64_t weight_bytes() const { return weights_->bytes(); }
  uint64_t file_matrix_bytes() const { return weights_->file_matrix_bytes(); }
  uint64_t kv_cache_bytes() const { return kv_bytes_; }
  uint64_t device_bytes() const { return acc_.allocated_bytes(); }
  // Weight bytes a decode step streams: every layer matrix and the output head
  // (the embedding contributes one row).
  uint64_t decode_weight_bytes() const;
  // Launches per decode step.
  size_t step_launches() const { return step_.size(); }
  // The kernel of each, in order.
  std::vector<std::string> step_kernels() const {
    std::vector<std::string> names;
    for (const StepLaunch& l : step_) names.push_back(l.kernel->name());
    return names;
  }
  // Whether decode runs the persistent step kernel, and if not, why.
  bool persistent_decode() const { return persistent_; }
  // Whether the decode step's launches are self-ordered (see GpuLlamaOptions).
  bool self_ordered_decode() const { return self_ordered_; }
  // Whether the token at position `pos` is run by the step launched with one
  // attention split (GpuLlamaOptions::one_split_step).
  bool one_split_at(int pos) const;
  // Whether short contexts have a step of their own (one_split_at).
  bool has_one_split_step() const { return splits_ > 1 && options_.one_split_step; }
  // Whether its Q/K/V launch tags its outputs for the attention (llm_tagged.cuh).
  bool tags_qkv() const { return !persistent_ && tags_qkv(self_ordered_); }
  const std::string& persistent_refusal() const { return persistent_refusal_; }
  // Waits for everything queued on the GPU.
  void synchronize() { acc_.synchronize(); }

  // Where a decode step's GPU time goes, by kernel class. Separate launches:
  // each launch on its own (a graph of `repeats` copies of it); what a
  // replayed step takes beyond the sum is the gaps between launches. The
  // persistent step: the time between its grid barriers over `repeats` steps
  // (each class includes its wait at the barrier that ends it).
  std::vector<KernelClassTime> profile_decode(int repeats);
  // The GPU time of a prefill pass of `n` tokens at position 0 by kernel class
  // (launches timed one after another; empty without batched prefill). Leaves
  // the cache holding those n positions.
  std::vector<KernelClassTime> profile_prefill(int n);
  // Where a self-ordered decode step's time goes, launch by launch, from the
  // stamps of its blocks (step_timeline.h; needs trace_decode and a
  // self-ordered step, else UsageError): the mean of `samples` steps at the
  // current position, each the last of kTimelineRun steps replayed back to
  // back. The cache keeps the current positions; the rows appended are
  // written again by the next step.
  StepTimeline decode_timeline(int samples);

 private:
  struct Scratch;  // device addresses of the work buffers

  void check_tokens(std::span<const int32_t> tokens, int count) const;
  void build_decode_step();
  // The launches of a decode step, chained (self-ordered) or in stream order,
  // with `splits` attention blocks a unit (0: splits_).
  std::vector<StepLaunch> decode_launches(bool chained, int splits = 0) const;
  // The cluster size of layer L's gate/up handing its output to down as Q8_K
  // in a step of self-ordered (`chained`) launches or not
  // (GpuLlamaOptions::swiglu_clusters); 0: none.
  int swiglu_cluster(const GpuLayer& L, bool chained) const;
  // The step that runs the token at `pos` (one_split_at): its launches and graph.
  const std::vector<StepLaunch>& step_at(int pos) const { return one_split_at(pos) ? short_step_ : step_; }
  gpu::Graph& graph_at(int pos) { return one_split_at(pos) ? *short_graph_ : *graph_; }
  std::unique_ptr<gpu::Graph> capture(const std::vector<StepLaunch>& launches);
  // A scratch allocation of the decode step's work buffers, with the RoPE
  // table's first `rope_floats` uploaded, its addresses in `s` (decode fields only).
  std::unique_ptr<gpu::DeviceMemory> allocate_decode_scratch(Scratch& s, const std::vector<float>& rope_table,
                                                             size_t rope_floats = SIZE_MAX);
  // Times the self-ordered step on options_.decode_scratches scratches and,
  // for "auto", the stream-ordered one, and keeps the fastest
  // (gpu_llama_choice.cpp).
  void choose_decode_step(const std::vector<float>& rope_table);
  // The phases of the persistent step; an empty string, or why it cannot run.
  std::string build_persistent_step();
  std::string add_matvec_phases(std::vector<LlmStepPhase>& out, std::vector<std::string>& names,
                                const std::string& what, const std::vector<const GpuMatrix*>& segments,
                                const std::vector<uint64_t>& biases, uint64_t in, uint64_t norm, uint64_t out_va,
                                int epilogue, uint32_t slot_bytes) const;
  std::vector<KernelClassTime> profile_persistent(int repeats);
  // The stamps of the step's last replay, launch by launch.
  std::vector<TracedLaunch> download_timeline();
  gpu::LaunchDims persistent_dims() const;
  // Decode attention of one layer (its KV cache, the step's scratch vectors)
  // in `splits` blocks a unit.
  LlmAttentionJob decode_attention_job(size_t layer, int splits) const;
  // The jobs of a matrix-vector product over segments sharing one input:
  // consecutive segments that pair with one activation kind share a job (at
  // most LLM_MAX_SEGMENTS), their outputs consecutive from out_va. FormatError
  // when segments of a job differ in width.
  struct MatvecGroup {
    LlmMatvecJob job;
    int act;
    const GpuMatrix* first;  // its first segment (for messages)
  };
  std::vector<MatvecGroup> matvec_groups(const std::vector<const GpuMatrix*>& segments,
                                         const std::vector<uint64_t>& biases, uint64_t in, uint64_t norm,
                                         uint64_t out_va, bool swiglu) const;
  // Layer L's gate/up in clusters of `cluster` blocks, its output handed to
  // down (llm_swiglu_cluster.cu, swiglu_cluster).
  void add_swiglu_cluster(std::vector<StepLaunch>& out, const GpuLayer& L, int cluster, StepChain& chain) const;
  // A decode product may take its input handed over by the launch before
  // (in_handoff), and a swiglu product may hand its output over as the next
  // product's activations (out_handoff, LLM_HANDOFF_*; llm_handoff.cuh):
  // returns whether it does. A store product tags its outputs with `out_tag`
  // where out_handoff is LLM_HANDOFF_TAGGED (llm_tagged.cuh; out_va then holds
  // a 64-bit word a row).
  bool add_matvec(std::vector<StepLaunch>& out, const std::string& what, const std::vector<const GpuMatrix*>& segments,
                  const std::vector<uint64_t>& biases, uint64_t in, uint64_t norm, uint64_t out_va,
                  const std::string& epilogue, StepChain* chain = nullptr, int out_handoff = LLM_HANDOFF_NONE,
                  bool in_handoff = false, int32_t out_tag = 0) const;
  // What a decode launch hands over to the add product of `m` (LLM_HANDOFF_*),
  // `which` a GpuLlamaOptions::kHandoff* bit.
  int handoff_for(const GpuMatrix& m, int which) const;
  // Whether a decode step's Q/K/V launch tags its outputs (`chained`: the
  // step's launches are self-ordered).
  bool tags_qkv(bool chained) const;
  // Returns the split-K ways whose partial products it left in batch_partial
  // for the next launch to add (`defer_split_sum`), or 0.
  int add_gemm(std::vector<StepLaunch>& out, const std::string& what, const std::vector<const GpuMatrix*>& w,
               const std::vector<uint64_t>& biases, uint64_t x, uint64_t y, int ldy, int n,
               const std::string& epilogue, bool defer_split_sum = false) const;
  std::vector<StepLaunch> prefill_launches(int n) const;
  void prefill(std::span<const int32_t> tokens);
  void write_state(int32_t token, int32_t pos);
  void write_state_at(const gpu::DeviceMemory& scratch, uint64_t state, int32_t token, int32_t pos);
  void launch_all(const std::vector<StepLaunch>& launches);

  ModelConfig config_;
  gpu::Accelerator& acc_;
  GpuLlamaOptions options_;
  mutable LlmKernels kernels_;
  std::unique_ptr<GpuWeights> weights_;
  int pos_ = 0;
  int splits_ = 1;
  int attention_heads_ = 1;
  uint64_t kv_bytes_ = 0;
  bool prefill_ok_ = false;
  bool prefill_bf16_ = false;
  bool prefill_wgmma_ = false;  // batches of more than 64 tokens take the wgmma products

  std::unique_ptr<gpu::DeviceMemory> kv_, scratch_, batch_;
  // The blocks' stamps of a traced step (trace_decode; the step state holds
  // its address, or 0 before the first decode_timeline).
  std::unique_ptr<gpu::DeviceMemory> trace_;
  std::unique_ptr<Scratch> s_;

  std::vector<StepLaunch> step_;
  std::unique_ptr<gpu::Graph> graph_;
  // The same step with one attention split (separate launches, splits_ > 1),
  // replayed while a token's context fits one split's chunk: there the other
  // splits' blocks only start and leave, and launching them made 1B F16 decode
  // 0.9% slower on the H200 (docs/perf-notes.md). Both steps attend the same
  // positions in the same order, so the results are the same bits.
  std::vector<StepLaunch> short_step_;
  std::unique_ptr<gpu::Graph> short_graph_;
  // The captured prefill passes by batch size (options_.prefill_graph): the
  // full batch's and the last other size's (a prompt's remainder), so prompts
  // of many lengths hold two at most.
  std::map<int, std::unique_ptr<gpu::Graph>> prefill_graphs_;
  bool self_ordered_ = false;

  // The persistent step: its phases (in device memory) and their classes.
  bool persistent_ = false;
  std::string persistent_refusal_;
  std::vector<std::string> phase_names_;
  std::vector<int32_t> phase_syncs_;
  std::unique_ptr<gpu::DeviceMemory> phases_;
  LlmStepParams step_params_{};
};

}  // namespace nvhcq::llm
