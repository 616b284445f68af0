#pragma once
// Which kernel of gemm_f32.cu / gemm_mma.cu / elementwise.cu runs a given
// problem, and how to launch it: kernel name, grid, block and dynamic shared
// memory. Backend-neutral (plain numbers), so the benchmarks, the tests and the
// tensor layer launch the same kernels the same way on "nv" and "cuda".
//
// GEMM kernels all take (C, A, B, int32 M, int32 N, int32 K): C = A * B with
// row-major A (M x K), B (K x N), C (M x N), C in the input type. Elementwise
// kernels take (out, a, [b,] uint64 n).

#include <cstdint>
#include <string>
#include <vector>

namespace nvhcq::kernels {

enum class GemmType { kF32, kF16, kBF16 };

const char* gemm_type_name(GemmType type);          // "f32", "f16", "bf16"
GemmType parse_gemm_type(const std::string& name);  // throws UsageError
uint32_t gemm_element_bytes(GemmType type);         // 4 or 2

struct KernelLaunch {
  std::string file;    // the embedded source, e.g. "gemm_mma.cu"
  std::string kernel;  // the extern "C" name in it
  // Compile for the device's arch with this suffix ("a" for sm_90a-only code).
  std::string arch_suffix;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory
  std::string variant;        // the tile configuration chosen, for reports
};

struct GemmProblem {
  GemmType type = GemmType::kF32;
  uint32_t m = 0, n = 0, k = 0;
  // A, B and C all start on a 16-byte boundary (device allocations always do).
  bool aligned16 = true;
  // The GPU's architecture ("sm_90"); architecture-specific kernels (wgmma on
  // sm_90) are only planned when it is known.
  std::string arch;
};

// The kernel for `p` on a GPU with `sm_count` SMs. `variant` empty picks one by
// shape; otherwise it names a configuration from gemm_variants() (a variant
// that cannot address the shape, such as a vector loader for odd N, is refused
// with UsageError).
KernelLaunch plan_gemm(const GemmProblem& p, uint32_t sm_count, const std::string& variant = "");
// The configurations of a type (for `arch` "sm_90" the wgmma kernel comes last).
std::vector<std::string> gemm_variants(GemmType type, const std::string& arch = "");
// Whether a GPU of NVRTC target `arch` ("sm_90") runs warpgroup (wgmma)
// kernels: Hopper only (sm_90, sm_90a).
bool arch_has_wgmma(const std::string& arch);
// The Hopper warpgroup (wgmma) kernel's variant name, and whether it can run `p`.
extern const char* const kWgmmaVariant;
bool wgmma_applies(const GemmProblem& p);
// Every GEMM kernel name in `file` (for compile tests).
std::vector<std::string> gemm_kernel_names(const std::string& file);

enum class ElementwiseOp { kAdd, kMul, kExp, kRelu };
const char* elementwise_op_name(ElementwiseOp op);  // "add", "mul", "exp", "relu"
int elementwise_inputs(ElementwiseOp op);           // 2 for add and mul, else 1
// What the op computes, in float64 (the reference its kernels are checked against;
// b is ignored by the one-input ops).
double elementwise_reference(ElementwiseOp op, double a, double b);
// ew_<op>_<f32|f16> over n elements (type kF32 or kF16).
KernelLaunch plan_elementwise(ElementwiseOp op, GemmType type, uint64_t n, uint32_t sm_count);
// bias_act_<f32|f16> over a rows x cols matrix: (y, bias, rows, cols, relu).
KernelLaunch plan_bias_act(GemmType type, uint32_t rows, uint32_t cols, uint32_t sm_count);
// Every kernel name in elementwise.cu.
std::vector<std::string> elementwise_kernel_names();

}  // namespace nvhcq::kernels
