// The persistent decode step (kernels/llm_decode_step.cu): its phases, the
// shared memory they are planned for, and its profile.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <string>

#include "base/error.h"
#include "gpu/hw/arch.h"
#include "kernels/llm_jobs.cuh"
#include "llm/gpu/gpu_llama.h"
#include "llm/gpu/gpu_scratch.h"
#include "llm/gpu/step_chunks.h"

namespace nvhcq::llm {
namespace {

// Weight slots: the ring holds as many as the shared memory allows. Larger
// slots hold more rows, which keeps more compute warps busy at once: on the
// H200, 1B Q6_K decoded at 478 tok/s with 16 KiB slots, 692 with 32 KiB and
// 764 with 64 KiB (docs/perf-notes.md).
constexpr uint32_t kSlotBytes = 64 * 1024;
constexpr uint32_t kMinSlots = 3;

}  // namespace

std::string GpuLlama::add_matvec_phases(std::vector<LlmStepPhase>& out, std::vector<std::string>& names,
                                        const std::string& what, const std::vector<const GpuMatrix*>& segments,
                                        const std::vector<uint64_t>& biases, uint64_t in, uint64_t norm,
                                        uint64_t out_va, int epilogue, uint32_t slot_bytes) const {
  // As add_matvec: segments that pair with one activation format share a phase.
  const bool swiglu = epilogue == LLM_EPI_SWIGLU;
  for (const MatvecGroup& g : matvec_groups(segments, biases, in, norm, out_va, swiglu)) {
    if (swiglu && g.job.segments != 2) return "gate and up take different activations";
    if (llm_act_smem_bytes(g.act, g.job.cols) > static_cast<uint32_t>(step_params_.work_bytes)) {
      return "activations exceed the work area";
    }
    LlmStepPhase ph{};
    ph.kind = LLM_PHASE_MATVEC;
    ph.act = g.act;
    ph.epilogue = epilogue;
    ph.mv = g.job;
    const std::string why = plan_chunks(ph, slot_bytes, acc_.sm_count());
    if (!why.empty()) return "'" + g.first->name + "': " + why;
    out.push_back(ph);
    names.push_back(what);
  }
  // Phases of one product share an input and write apart: one barrier after all.
  out.back().sync_after = 1;
  return {};
}

std::string GpuLlama::build_persistent_step() {
  const uint32_t sm = sm_version(acc_.arch());
  if (sm < 0x900) return "the GPU has no bulk copies (sm_90 and newer do)";
  const ModelConfig& c = config_;
  const GpuWeights& w = *weights_;

  // Shared memory: bookkeeping, the work area (the largest activation vector,
  // or an attention block), then the slots.
  uint32_t work = LLM_ATTN_SHARED_BYTES;
  auto widen = [&](const GpuMatrix& m) {
    work = std::max<uint32_t>(work, llm_act_smem_bytes(llm_act_kind(m.desc.format), m.desc.cols));
  };
  uint64_t longest_row = 0;
  for (const GpuLayer& l : w.layers) {
    for (const GpuMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) {
      widen(*m);
      longest_row = std::max(longest_row, staged_row_bytes(m->desc) * (m == &l.gate || m == &l.up ? 2 : 1));
    }
  }
  widen(w.output);
  longest_row = std::max(longest_row, staged_row_bytes(w.output.desc));
  work = (work + 127) / 128 * 128;
  uint32_t budget = 0;
  try {
    budget = gpu::hw::arch_params(sm).max_shared_per_block;
  } catch (const Error&) {
    return "no launch parameters for " + acc_.arch();
  }
  const uint32_t slot_bytes =
      static_cast<uint32_t>(std::max<uint64_t>(kSlotBytes, (longest_row + 127) / 128 * 128));
  const uint32_t room = budget > LLM_STEP_CONTROL_BYTES + work ? budget - LLM_STEP_CONTROL_BYTES - work : 0;
  const uint32_t slots = std::min<uint32_t>(room / slot_bytes, LLM_STEP_MAX_SLOTS);
  if (slots < kMinSlots) return "rows too long for the shared memory";
  step_params_ = LlmStepParams{};
  step_params_.slots = static_cast<int32_t>(slots);
  step_params_.slot_bytes = static_cast<int32_t>(slot_bytes);
  step_params_.work_bytes = static_cast<int32_t>(work);

  std::vector<LlmStepPhase> phases;
  std::vector<std::string> names;
  LlmStepPhase embed{};
  embed.kind = LLM_PHASE_EMBED;
  embed.mv.m[0] = w.token_embd.desc;
  embed.mv.out = s_->x;
  embed.mv.state = s_->state;
  embed.sync_after = 1;
  phases.push_back(embed);
  names.push_back("embed");

  std::string why;
  auto matvec = [&](const std::string& what, const std::vector<const GpuMatrix*>& m, const std::vector<uint64_t>& b,
                    uint64_t in, uint64_t norm, uint64_t out, int epilogue) {
    if (why.empty()) why = add_matvec_phases(phases, names, what, m, b, in, norm, out, epilogue, slot_bytes);
  };
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const GpuLayer& L = w.layers[l];
    matvec("qkv", {&L.wq, &L.wk, &L.wv}, {L.bq, L.bk, L.bv}, s_->x, L.attn_norm, s_->qkv, LLM_EPI_STORE);
    LlmStepPhase at{};
    at.kind = LLM_PHASE_ATTENTION;
    at.at = decode_attention_job(l, splits_);
    at.sync_after = 1;
    phases.push_back(at);
    names.push_back("attention");
    matvec("wo", {&L.wo}, {}, s_->attn, 0, s_->x, LLM_EPI_ADD);
    matvec("ffn_gate_up", {&L.gate, &L.up}, {}, s_->x, L.ffn_norm, s_->h, LLM_EPI_SWIGLU);
    matvec("ffn_down", {&L.down}, {}, s_->h, 0, s_->x, LLM_EPI_ADD);
  }
  matvec("logits", {&w.output}, {}, s_->x, w.output_norm, s_->logits, LLM_EPI_LOGITS);
  if (!why.empty()) return why;
  LlmStepPhase finish{};
  finish.kind = LLM_PHASE_FINISH;
  finish.mv.state = s_->state;
  finish.mv.in = s_->history;
  phases.push_back(finish);
  names.push_back("step");

  int barriers = 0;
  for (const LlmStepPhase& p : phases) barriers += p.sync_after;
  if (static_cast<uint64_t>(barriers) + 2 > Scratch::max_step_times(c)) return "too many phases";
  phases_ = acc_.alloc(phases.size() * sizeof(LlmStepPhase));
  acc_.upload(*phases_, 0, phases.data(), phases.size() * sizeof(LlmStepPhase));
  step_params_.phases = phases_->va();
  step_params_.barrier = s_->step_barrier;
  step_params_.count = static_cast<int32_t>(phases.size());
  step_params_.barriers = barriers;
  phase_names_ = std::move(names);
  phase_syncs_.clear();
  for (const LlmStepPhase& p : phases) phase_syncs_.push_back(p.sync_after);
  return {};
}

gpu::LaunchDims GpuLlama::persistent_dims() const {
  gpu::LaunchDims d;
  d.grid[0] = acc_.sm_count();
  d.block[0] = LLM_STEP_THREADS;
  d.dynamic_shared_bytes = LLM_STEP_CONTROL_BYTES + static_cast<uint32_t>(step_params_.work_bytes) +
                           static_cast<uint32_t>(step_params_.slots) * static_cast<uint32_t>(step_params_.slot_bytes);
  return d;
}

std::vector<KernelClassTime> GpuLlama::profile_persistent(int repeats) {
  // Phases ending at one barrier form one interval, named by the last of them.
  std::vector<std::string> interval_names;
  for (size_t i = 0; i < phase_names_.size(); ++i) {
    if (phase_syncs_[i] || i + 1 == phase_names_.size()) interval_names.push_back(phase_names_[i]);
  }
  std::vector<KernelClassTime> classes;
  std::map<std::string, size_t> index;
  for (const std::string& n : interval_names) {
    if (index.emplace(n, classes.size()).second) classes.push_back(KernelClassTime{n, 0, 0.0});
    ++classes[index[n]].launches;
  }
  if (repeats <= 0 || pos_ + 1 > options_.context) return classes;
  LlmStepParams timed = step_params_;
  timed.timestamps = s_->step_times;
  const gpu::LaunchDims d = persistent_dims();
  std::vector<uint64_t> t(interval_names.size() + 1);
  std::vector<double> sums(interval_names.size(), 0.0);
  const int first = pos_;
  int timed_steps = 0;
  write_state(0, pos_);
  // Steps one at a time (each leaves its timestamps); the first warms up.
  for (int r = 0; r <= repeats && pos_ + 1 <= options_.context; ++r) {
    acc_.launch(kernels_.decode_step(), gpu::KernelArgs().add(timed), d);
    acc_.synchronize();
    acc_.download(t.data(), *scratch_, s_->step_times - scratch_->va(), 8 * t.size());
    ++pos_;
    if (r == 0) continue;
    ++timed_steps;
    for (size_t i = 0; i < interval_names.size(); ++i) sums[i] += static_cast<double>(t[i + 1] - t[i]) / 1000.0;
  }
  for (size_t i = 0; i < interval_names.size() && timed_steps > 0; ++i) {
    classes[index[interval_names[i]]].microseconds += sums[i] / timed_steps;
  }
  pos_ = first;
  return classes;
}

}  // namespace nvhcq::llm
