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

const gpu::Kernel& LlmKernels::matvec(int act_kind, const std::string& epilogue, int format, int rows) {
  std::vector<std::string> build;
  if (format != 0 || rows != 0) build.push_back("MV_ACT=" + std::to_string(act_kind));
  if (format != 0) build.push_back("MV_FORMAT=" + std::to_string(format));
  if (rows != 0) build.push_back("MV_ROWS=" + std::to_string(rows));
  return get("llm_matvec.cu", matvec_kernel_name(act_kind, epilogue), "", build);
}

const gpu::Kernel& LlmKernels::gemm(bool bf16, const std::string& epilogue, int wgmma_tokens) {
  const std::string name = gemm_kernel_name(bf16, epilogue, wgmma_tokens);
  if (wgmma_tokens) return get("llm_gemm_wgmma.cu", name, "a");
  return get("llm_gemm.cu", name);
}

const gpu::Kernel& LlmKernels::get(const std::string& file, const std::string& name, const std::string& arch_suffix,
                                   const std::vector<std::string>& build) {
  std::string tag;
  for (const std::string& d : build) tag += " " + d;
  auto it = kernels_.find(name + tag);
  if (it != kernels_.end()) return *it->second;
  auto cubin = cubins_.find(file + tag);
  if (cubin == cubins_.end()) {
    compile::CompileOptions o;
    o.arch = acc_.arch();
    o.defines = defines_;
    o.defines.insert(o.defines.end(), build.begin(), build.end());
    if (!o.arch.ends_with(arch_suffix)) o.arch += arch_suffix;
    cubin = cubins_.emplace(file + tag, compile::compile_embedded(file, o).cubin).first;
  }
  auto kernel = acc_.load(cubin->second, name);
  return *kernels_.emplace(name + tag, std::move(kernel)).first->second;
}

}  // namespace nvhcq::llm
