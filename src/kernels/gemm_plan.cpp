#include "kernels/gemm_plan.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace nvhcq::kernels {
namespace {

// The tile shapes gemm_mma.cu instantiates (its NVHCQ_GEMM_MMA_TYPES list).
struct MmaConfig {
  const char* name;
  uint32_t bm, bn, bk, wm, wn, stages;
  bool aligned;
};
constexpr MmaConfig kMmaConfigs[] = {
    {"128x256x32_s4", 128, 256, 32, 64, 64, 4, true},
    {"128x256x64_s3", 128, 256, 64, 64, 64, 3, true},
    {"128x128x32_s4", 128, 128, 32, 64, 64, 4, true},
    {"64x64x32_s4", 64, 64, 32, 32, 32, 4, true},
    {"generic", 64, 64, 32, 32, 32, 2, false},
};

// gemm_f32.cu's kernels: 256 threads each.
struct F32Config {
  const char* name;
  uint32_t bm, bn;
  bool vec4;
};
constexpr F32Config kF32Configs[] = {
    {"128x128", 128, 128, true},
    {"64x64", 64, 64, true},
    {"128x128_scalar", 128, 128, false},
    {"64x64_scalar", 64, 64, false},
};

uint64_t tiles(uint32_t m, uint32_t n, uint32_t bm, uint32_t bn) {
  return uint64_t{(m + bm - 1) / bm} * ((n + bn - 1) / bn);
}

// gemm_wgmma.cu: 128 x 256 tiles, two warpgroups, a 4-slot ring of 64-deep k-tiles.
KernelLaunch plan_wgmma(const GemmProblem& p) {
  if (!arch_has_wgmma(p.arch)) {
    throw UsageError(std::string("GEMM variant ") + kWgmmaVariant + " needs an sm_90 GPU" +
                     (p.arch.empty() ? "" : ", not " + p.arch));
  }
  if (!wgmma_applies(p)) {
    throw UsageError(std::string("GEMM variant ") + kWgmmaVariant +
                     " needs K and N multiples of 8 and 16-byte aligned matrices");
  }
  KernelLaunch l;
  l.file = "gemm_wgmma.cu";
  l.kernel = std::string("gemm_wgmma_") + gemm_type_name(p.type) + "_128x256x64_s4";
  l.arch_suffix = p.arch == "sm_90a" ? "" : "a";
  l.variant = "wgmma 128x256x64_s4";
  uint64_t t = tiles(p.m, p.n, 128, 256);
  if (t > 0x7fffffffu) throw UsageError("GEMM too large for one launch");
  l.grid[0] = static_cast<uint32_t>(t);
  l.block[0] = 256;
  l.shared_bytes = 4 * (128 * 64 + 64 * 256) * 2 + 1024;
  return l;
}

KernelLaunch plan_mma(const GemmProblem& p, uint32_t sm_count, const std::string& variant) {
  if (variant == kWgmmaVariant) return plan_wgmma(p);
  const bool vector_ok = p.aligned16 && p.k % 8 == 0 && p.n % 8 == 0;
  const MmaConfig* chosen = nullptr;
  if (variant.empty()) {
    if (!vector_ok) {
      chosen = &kMmaConfigs[4];
    } else {
      // The largest tile that still gives every SM a CTA; the smallest otherwise.
      for (int i : {0, 2, 3}) {
        chosen = &kMmaConfigs[i];
        if (tiles(p.m, p.n, chosen->bm, chosen->bn) >= sm_count) break;
      }
    }
  } else {
    for (const auto& c : kMmaConfigs) {
      if (variant == c.name) chosen = &c;
    }
    if (chosen == nullptr)
      throw UsageError("no " + std::string(gemm_type_name(p.type)) + " GEMM variant " + variant);
    if (chosen->aligned && !vector_ok) {
      throw UsageError("GEMM variant " + variant +
                       " needs K and N multiples of 8 and 16-byte aligned matrices");
    }
  }
  KernelLaunch l;
  l.file = "gemm_mma.cu";
  l.kernel = std::string("gemm_mma_") + gemm_type_name(p.type) + "_" + chosen->name;
  l.variant = std::string("mma ") + chosen->name;
  uint64_t t = tiles(p.m, p.n, chosen->bm, chosen->bn);
  if (t > 0x7fffffffu) throw UsageError("GEMM too large for one launch");
  l.grid[0] = static_cast<uint32_t>(std::max<uint64_t>(t, 1));
  l.block[0] = (chosen->bm / chosen->wm) * (chosen->bn / chosen->wn) * 32;
  l.shared_bytes = chosen->stages * (chosen->bm * chosen->bk + chosen->bk * chosen->bn) * 2;
  return l;
}

KernelLaunch plan_f32(const GemmProblem& p, uint32_t sm_count, const std::string& variant) {
  const bool vector_ok = p.aligned16 && p.k % 4 == 0 && p.n % 4 == 0;
  const F32Config* chosen = nullptr;
  if (variant.empty()) {
    bool big = tiles(p.m, p.n, 128, 128) >= sm_count;
    chosen = &kF32Configs[(big ? 0 : 1) + (vector_ok ? 0 : 2)];
  } else {
    for (const auto& c : kF32Configs) {
      if (variant == c.name) chosen = &c;
    }
    if (chosen == nullptr) throw UsageError("no f32 GEMM variant " + variant);
    if (chosen->vec4 && !vector_ok) {
      throw UsageError("GEMM variant " + variant +
                       " needs K and N multiples of 4 and 16-byte aligned matrices");
    }
  }
  KernelLaunch l;
  l.file = "gemm_f32.cu";
  l.kernel = std::string("gemm_f32_") + chosen->name;
  l.variant = std::string("simt ") + chosen->name;
  uint32_t tiles_n = (p.n + chosen->bn - 1) / chosen->bn,
           tiles_m = (p.m + chosen->bm - 1) / chosen->bm;
  if (tiles_m > 65535) throw UsageError("GEMM M too large for one launch");
  l.grid[0] = std::max<uint32_t>(tiles_n, 1);
  l.grid[1] = std::max<uint32_t>(tiles_m, 1);
  l.block[0] = 256;
  l.shared_bytes = 2 * 8 * ((chosen->bm + 4) + chosen->bn) * 4;
  return l;
}

}  // namespace

bool arch_has_wgmma(const std::string& arch) {
  return arch == "sm_90" || arch == "sm_90a";
}

const char* const kWgmmaVariant = "wgmma_128x256x64_s4";

bool wgmma_applies(const GemmProblem& p) {
  return p.type != GemmType::kF32 && arch_has_wgmma(p.arch) && p.aligned16 && p.k % 8 == 0 &&
         p.n % 8 == 0;
}

const char* gemm_type_name(GemmType type) {
  switch (type) {
    case GemmType::kF32:
      return "f32";
    case GemmType::kF16:
      return "f16";
    case GemmType::kBF16:
      return "bf16";
  }
  return "?";
}

GemmType parse_gemm_type(const std::string& name) {
  if (name == "f32") return GemmType::kF32;
  if (name == "f16") return GemmType::kF16;
  if (name == "bf16") return GemmType::kBF16;
  throw UsageError("unknown element type '" + name + "' (f32, f16 or bf16)");
}

uint32_t gemm_element_bytes(GemmType type) {
  return type == GemmType::kF32 ? 4 : 2;
}

KernelLaunch plan_gemm(const GemmProblem& p, uint32_t sm_count, const std::string& variant) {
  if (p.m == 0 || p.n == 0 || p.k == 0) throw UsageError("GEMM dimensions must be positive");
  if (p.m > 0x7fffffffu || p.n > 0x7fffffffu || p.k > 0x7fffffffu)
    throw UsageError("GEMM dimension over 2^31");
  return p.type == GemmType::kF32 ? plan_f32(p, sm_count, variant) : plan_mma(p, sm_count, variant);
}

std::vector<std::string> gemm_variants(GemmType type, const std::string& arch) {
  std::vector<std::string> names;
  if (type == GemmType::kF32) {
    for (const auto& c : kF32Configs) names.push_back(c.name);
  } else {
    for (const auto& c : kMmaConfigs) names.push_back(c.name);
    if (arch_has_wgmma(arch))
      names.push_back(kWgmmaVariant);  // last: the newest code runs after the rest
  }
  return names;
}

std::vector<std::string> gemm_kernel_names(const std::string& file) {
  std::vector<std::string> names;
  if (file == "gemm_f32.cu") {
    for (const auto& c : kF32Configs) names.push_back(std::string("gemm_f32_") + c.name);
  } else if (file == "gemm_mma.cu") {
    for (const char* t : {"f16", "bf16"}) {
      for (const auto& c : kMmaConfigs)
        names.push_back(std::string("gemm_mma_") + t + "_" + c.name);
    }
  } else if (file == "gemm_wgmma.cu") {
    for (const char* t : {"f16", "bf16"})
      names.push_back(std::string("gemm_wgmma_") + t + "_128x256x64_s4");
  }
  return names;
}

const char* elementwise_op_name(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::kAdd:
      return "add";
    case ElementwiseOp::kMul:
      return "mul";
    case ElementwiseOp::kExp:
      return "exp";
    case ElementwiseOp::kRelu:
      return "relu";
  }
  return "?";
}

double elementwise_reference(ElementwiseOp op, double a, double b) {
  switch (op) {
    case ElementwiseOp::kAdd:
      return a + b;
    case ElementwiseOp::kMul:
      return a * b;
    case ElementwiseOp::kExp:
      return std::exp(a);
    case ElementwiseOp::kRelu:
      return a < 0 ? 0 : a;
  }
  return 0;
}

int elementwise_inputs(ElementwiseOp op) {
  return op == ElementwiseOp::kAdd || op == ElementwiseOp::kMul ? 2 : 1;
}

namespace {
// A grid-stride grid: enough 256-thread CTAs to fill every SM (8 each), no more
// than the data needs.
uint32_t stride_grid(uint64_t work_items, uint32_t sm_count) {
  uint64_t want = (work_items + 255) / 256;
  return static_cast<uint32_t>(std::clamp<uint64_t>(want, 1, uint64_t{std::max(sm_count, 1u)} * 8));
}
}  // namespace

KernelLaunch plan_elementwise(ElementwiseOp op, GemmType type, uint64_t n, uint32_t sm_count) {
  if (type == GemmType::kBF16) throw UsageError("elementwise kernels are f32 and f16");
  KernelLaunch l;
  l.file = "elementwise.cu";
  l.kernel = std::string("ew_") + elementwise_op_name(op) + "_" + gemm_type_name(type);
  uint64_t per_vector = type == GemmType::kF32 ? 4 : 8;
  l.grid[0] = stride_grid((n + per_vector - 1) / per_vector, sm_count);
  l.block[0] = 256;
  return l;
}

KernelLaunch plan_bias_act(GemmType type, uint32_t rows, uint32_t cols, uint32_t sm_count) {
  if (type == GemmType::kBF16) throw UsageError("bias_act kernels are f32 and f16");
  KernelLaunch l;
  l.file = "elementwise.cu";
  l.kernel = std::string("bias_act_") + gemm_type_name(type);
  l.grid[0] = stride_grid(uint64_t{rows} * cols, sm_count);
  l.block[0] = 256;
  return l;
}

std::vector<std::string> elementwise_kernel_names() {
  std::vector<std::string> names;
  for (const char* t : {"f32", "f16"}) {
    for (const char* op : {"add", "mul", "exp", "relu"})
      names.push_back(std::string("ew_") + op + "_" + t);
    names.push_back(std::string("bias_act_") + t);
  }
  return names;
}

}  // namespace nvhcq::kernels
