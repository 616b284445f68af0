#include "llm/gpu/llm_kernels.h"

#include <utility>

#include "base/error.h"
#include "compile/compiler.h"
#include "kernels/llm_formats.cuh"

namespace nvhcq::llm {

const char* act_kind_name(int act_kind) {
  switch (act_kind) {
    case kActQ8x32: return "q8x32";
    case kActQ8K: return "q8k";
    case kActF16: return "f16";
    case kActBF16: return "bf16";
    case kActF32: return "f32";
    default: throw Error("unknown activation kind " + std::to_string(act_kind));
  }
}

std::string matvec_kernel_name(int act_kind, const std::string& epilogue) {
  return std::string("matvec_") + act_kind_name(act_kind) + "_" + epilogue;
}

std::string gemm_kernel_name(bool bf16, const std::string& epilogue, int wgmma_tokens) {
  const std::string suffix = std::string(bf16 ? "bf16_" : "f16_") + epilogue;
  return (wgmma_tokens ? "gemm_wg" + std::to_string(wgmma_tokens) + "_" : std::string("gemm_w_")) + suffix;
}

LlmKernels::LlmKernels(gpu::Accelerator& acc, std::vector<std::string> defines)
    : acc_(acc), defines_(std::move(defines)) {}

const gpu::Kernel& LlmKernels::matvec(int act_kind, const std::string& epilogue) {
  return get("llm_matvec.cu", matvec_kernel_name(act_kind, epilogue));
}

const gpu::Kernel& LlmKernels::gemm(bool bf16, const std::string& epilogue, int wgmma_tokens) {
  const std::string name = gemm_kernel_name(bf16, epilogue, wgmma_tokens);
  if (wgmma_tokens) return get("llm_gemm_wgmma.cu", name, "a");
  return get("llm_gemm.cu", name);
}

const gpu::Kernel& LlmKernels::get(const std::string& file, const std::string& name, const std::string& arch_suffix) {
  auto it = kernels_.find(name);
  if (it != kernels_.end()) return *it->second;
  auto cubin = cubins_.find(file);
  if (cubin == cubins_.end()) {
    compile::CompileOptions o;
    o.arch = acc_.arch();
    o.defines = defines_;
    if (!o.arch.ends_with(arch_suffix)) o.arch += arch_suffix;
    cubin = cubins_.emplace(file, compile::compile_embedded(file, o).cubin).first;
  }
  auto kernel = acc_.load(cubin->second, name);
  return *kernels_.emplace(name, std::move(kernel)).first->second;
}

}  // namespace nvhcq::llm
