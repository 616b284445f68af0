// The LLM engine's kernel files compile with NVRTC for the H100/H200 (sm_90;
// the warpgroup products for sm_90a), as the engine compiles them (with and
// without the decode timeline's stamps, and the matrix-vector kernels in
// builds of one activation kind, format and row count), and hold every kernel
// llm/gpu/llm_kernels.h loads by name. Without a GPU this is the only check
// that device-only code still builds: a static_assert on a job layout or a
// kernel the host names but the file lost fails here, not on the GPU machine,
// and so does a helper taking a job by reference that the compiler did not
// inline.
// Skips where NVRTC is not installed.

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "gpu/cubin.h"
#include "kernels/llm_formats.cuh"
#include "kernels/llm_matvec_tuning.cuh"
#include "llm/gpu/llm_kernels.h"

namespace nvhcq::llm {
namespace {

struct LlmKernelFile {
  std::string file;
  std::string arch;
  std::vector<std::string> kernels;  // what LlmKernels loads from it
  bool traced;                       // built with LLM_TRACE as well (it stamps the timeline)
  // Further builds the engine compiles (LlmKernels::matvec's builds of one
  // activation kind, weight format and row count).
  std::vector<std::vector<std::string>> builds = {};
};

void PrintTo(const LlmKernelFile& f, std::ostream* os) { *os << f.file << " for " << f.arch; }

std::vector<std::string> matvec_kernels() {
  std::vector<std::string> out;
  for (int act : {kActQ8x32, kActQ8K, kActF16, kActBF16, kActF32}) {
    for (const char* epi : {"store", "add", "swiglu", "logits"}) out.push_back(matvec_kernel_name(act, epi));
  }
  // The early-loading kernels (llm_mv_early): store, add and gate/up's SwiGLU
  // for the quantized and 16-bit kinds.
  for (int act : {kActQ8x32, kActQ8K, kActF16, kActBF16}) {
    for (const char* epi : {"store_early", "add_early", "swiglu_early"}) out.push_back(matvec_kernel_name(act, epi));
  }
  // Hand-offs (llm_handoff.cuh): gate/up's SwiGLU handing its output over, and
  // the add product taking an input handed over, for the quantized kinds.
  for (int act : {kActQ8x32, kActQ8K}) {
    for (const char* epi : {"swiglu_handoff", "swiglu_handoff_early", "add_handoff", "add_handoff_early"}) {
      out.push_back(matvec_kernel_name(act, epi));
    }
  }
  return out;
}

// The prefill products with wgmma_tokens per CTA (0: mma.sync), as LlmKernels names them.
std::vector<std::string> gemm_kernels(int wgmma_tokens) {
  std::vector<std::string> out;
  for (bool bf16 : {false, true}) {
    for (const char* epi : {"store", "add", "swiglu"}) out.push_back(gemm_kernel_name(bf16, epi, wgmma_tokens));
  }
  return out;
}

std::vector<LlmKernelFile> kernel_files() {
  std::vector<std::string> wgmma = gemm_kernels(128);
  for (const std::string& k : gemm_kernels(256)) wgmma.push_back(k);
  std::vector<std::string> mma = gemm_kernels(0);
  mma.push_back("add_partials");
  return {
      {"llm_matvec.cu",
       "sm_90",
       matvec_kernels(),
       true,
       {{"MV_ACT=" + std::to_string(kActQ8K), "MV_FORMAT=" + std::to_string(kGpuQ6_K), "MV_ROWS=4"},
        {"MV_ACT=" + std::to_string(kActQ8K), "MV_FORMAT=" + std::to_string(kMvBuildQ4KQ6K), "MV_ROWS=4"},
        {"MV_ACT=" + std::to_string(kActQ8x32), "MV_ROWS=1"},
        {"LLM_TRACE=1", "MV_ACT=" + std::to_string(kActF16), "MV_FORMAT=" + std::to_string(kGpuF16), "MV_ROWS=2"}}},
      {"llm_attention.cu",
       "sm_90",
       {"attention", "attention_head", "attention_head_handoff", "attention_head_handoff_q8k_64",
        "attention_head_handoff_q8k_128", "attention_head_handoff_q8k_256", "rope_kv_store"},
       true},
      {"llm_step.cu", "sm_90",
       {"embed_tokens", "finish_step", "swiglu_f32", "rmsnorm_rows", "add_splits_rmsnorm_rows"}, true},
      {"llm_decode_step.cu", "sm_90", {"llm_decode_step"}, false},
      {"llm_flash_attention.cu", "sm_90", {"flash_prefill_hd64", "flash_prefill_hd128"}, false},
      {"llm_gemm.cu", "sm_90", mma, false},
      {"llm_gemm_wgmma.cu", "sm_90a", wgmma, false},
  };
}

// Whether a build with these defines holds `kernel`: every build holds every
// kernel (those of other kinds a trap), but for the 16-bit gate/up early
// kernels, which only the 16-bit kinds' builds and the build of every kind
// hold (llm_matvec.cu: the quantized builds' CUBINs stay as they were).
bool build_holds(const std::vector<std::string>& defines, const std::string& kernel) {
  if (kernel != matvec_kernel_name(kActF16, "swiglu_early") && kernel != matvec_kernel_name(kActBF16, "swiglu_early")) {
    return true;
  }
  for (const std::string& d : defines) {
    if (d.rfind("MV_ACT=", 0) == 0) {
      const int act = std::stoi(d.substr(7));
      return act == kActF16 || act == kActBF16;
    }
  }
  return true;
}

class LlmKernelsCompile : public ::testing::TestWithParam<LlmKernelFile> {};

TEST_P(LlmKernelsCompile, EveryKernelTheEngineLoadsIsThere) {
  if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here";
  const LlmKernelFile& f = GetParam();
  std::vector<std::vector<std::string>> builds = {{}};
  if (f.traced) builds.push_back({"LLM_TRACE=1"});
  builds.insert(builds.end(), f.builds.begin(), f.builds.end());
  for (const auto& defines : builds) {
    std::string with;
    for (const std::string& d : defines) with += " " + d;
    SCOPED_TRACE(f.file + " for " + f.arch + (with.empty() ? "" : " with" + with));
    compile::CompileOptions o;
    o.arch = f.arch;
    o.defines = defines;
    gpu::Cubin cubin(compile::compile_embedded(f.file, o).cubin);
    for (const std::string& name : f.kernels) {
      if (build_holds(defines, name)) {
        EXPECT_TRUE(cubin.kernels().count(name)) << name << " is missing";
      } else {
        EXPECT_FALSE(cubin.kernels().count(name)) << name << " is in a build of another kind";
      }
    }
    // A device function that takes a job (a __grid_constant__ parameter) by
    // reference and is left a real call gets a generic address of the
    // parameter, which faults on nv (an MMU fault at 0x0: docs/perf-notes.md).
    for (const std::string& fn : cubin.functions()) {
      if (cubin.kernels().count(fn)) continue;
      for (const char* job : {"LlmMatvecJob", "LlmAttentionJob", "LlmGemmJob", "LlmStepParams"}) {
        EXPECT_EQ(fn.find(job), std::string::npos) << fn << " takes a " << job << " and was not inlined";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, LlmKernelsCompile, ::testing::ValuesIn(kernel_files()),
                         [](const auto& info) { return info.param.file.substr(0, info.param.file.find('.')); });

}  // namespace
}  // namespace nvhcq::llm
