#pragma once
// The LLM engine's GPU kernels (kernels/llm_*.cu), compiled through NVRTC for the
// accelerator's architecture (cached on disk) and loaded on it by name.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/accelerator.h"

namespace nvhcq::llm {

class LlmKernels {
 public:
  // `defines` (NAME=VALUE) go to every file's compilation (e.g. LLM_TRACE=1).
  explicit LlmKernels(gpu::Accelerator& acc, std::vector<std::string> defines = {});

  // matvec_<act>_<epilogue>; act is an LlmActKind, epilogue "store", "add",
  // "swiglu" or "logits" (and their _handoff and _early kinds). With `format`
  // (a kGpu weight format every matrix of the product has) and `rows` (its rows
  // a warp), from a build of llm_matvec.cu that holds the products of that
  // activation kind, format and row count only (MV_ACT, MV_FORMAT, MV_ROWS;
  // 0: any): the kernel then carries little code it does not run.
  const gpu::Kernel& matvec(int act_kind, const std::string& epilogue, int format = 0, int rows = 0);
  // gemm_w_<f16|bf16>_<store|add|swiglu> (prefill products, mma.sync), or with
  // wgmma_tokens 128 or 256 gemm_wg<tokens>_... (Hopper warpgroup products with
  // that many tokens per CTA, compiled for sm_90a).
  const gpu::Kernel& gemm(bool bf16, const std::string& epilogue, int wgmma_tokens = 0);
  const gpu::Kernel& add_partials() { return get("llm_gemm.cu", "add_partials"); }
  const gpu::Kernel& attention() { return get("llm_attention.cu", "attention"); }
  // Decode attention with one query head per block (LlmAttentionJob::heads_per_block 1).
  const gpu::Kernel& attention_head() { return get("llm_attention.cu", "attention_head"); }
  // The same, its output handed over quantized (LlmAttentionJob::out_handoff).
  const gpu::Kernel& attention_head_handoff() { return get("llm_attention.cu", "attention_head_handoff"); }
  // Handed over as Q8_K, in clusters of 256 / head_dim heads (64 and 128: sm_90 and newer).
  const gpu::Kernel& attention_head_handoff_q8k(int head_dim) {
    return get("llm_attention.cu", "attention_head_handoff_q8k_" + std::to_string(head_dim));
  }
  const gpu::Kernel& rope_kv_store() { return get("llm_attention.cu", "rope_kv_store"); }
  // Prefill attention on the tensor cores, for heads of 64 or 128 dimensions.
  const gpu::Kernel& flash_prefill(int head_dim) {
    return get("llm_flash_attention.cu", head_dim == 64 ? "flash_prefill_hd64" : "flash_prefill_hd128");
  }
  // The persistent decode step (sm_90 and newer).
  const gpu::Kernel& decode_step() { return get("llm_decode_step.cu", "llm_decode_step"); }
  const gpu::Kernel& embed_tokens() { return get("llm_step.cu", "embed_tokens"); }
  const gpu::Kernel& finish_step() { return get("llm_step.cu", "finish_step"); }
  const gpu::Kernel& swiglu() { return get("llm_step.cu", "swiglu_f32"); }
  // Gate/up handing a Q8_K output over from clusters of `cluster` (4 or 8) blocks (llm_swiglu_cluster.cu).
  const gpu::Kernel& swiglu_cluster(int cluster) {
    return get("llm_swiglu_cluster.cu", "swiglu_q8k_handoff_c" + std::to_string(cluster));
  }
  const gpu::Kernel& rmsnorm_rows() { return get("llm_step.cu", "rmsnorm_rows"); }
  const gpu::Kernel& add_splits_rmsnorm_rows() { return get("llm_step.cu", "add_splits_rmsnorm_rows"); }

 private:
  // `arch_suffix` "a" compiles the file for the architecture-specific target
  // (sm_90a: wgmma); `build` (NAME=VALUE) goes to this file's compilation only.
  const gpu::Kernel& get(const std::string& file, const std::string& name, const std::string& arch_suffix = "",
                         const std::vector<std::string>& build = {});

  gpu::Accelerator& acc_;
  std::vector<std::string> defines_;
  std::map<std::string, std::vector<uint8_t>> cubins_;  // by source file and build
  std::map<std::string, std::unique_ptr<gpu::Kernel>> kernels_;  // by name and build
};

// "q8x32", "q8k", "f16", "bf16", "f32".
const char* act_kind_name(int act_kind);
// The names LlmKernels loads matvec() and gemm() by (in llm_matvec.cu, and
// llm_gemm.cu or, with wgmma_tokens, llm_gemm_wgmma.cu).
std::string matvec_kernel_name(int act_kind, const std::string& epilogue);
std::string gemm_kernel_name(bool bf16, const std::string& epilogue, int wgmma_tokens = 0);

}  // namespace nvhcq::llm
