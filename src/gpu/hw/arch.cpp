#include "gpu/hw/arch.h"

#include <cstdio>

#include "base/error.h"

namespace nvhcq::gpu::hw {
namespace {

ArchParams make(uint32_t sm, const QmdLayout* qmd, uint32_t param_base,
                std::vector<uint32_t> configs, uint32_t max_shared_per_block) {
  ArchParams p;
  p.sm_version = sm;
  p.sass_version = ((sm & 0xf00) >> 4) | (sm & 0xf);
  p.qmd = qmd;
  p.default_param_base = param_base;
  p.shared_configs_kib = std::move(configs);
  p.max_shared_per_block = max_shared_per_block;
  return p;
}

}  // namespace

const ArchParams& arch_params(uint32_t sm_version) {
  // Carve-outs and per-block limits from the CUDA programming guide's
  // compute-capability tables.
  static const ArchParams kGa100 =
      make(0x800, &kQmdV03, 0x160, {0, 8, 16, 32, 64, 100, 132, 164}, 163 * 1024);
  static const ArchParams kGa10x = make(0x806, &kQmdV03, 0x160, {0, 8, 16, 32, 64, 100}, 99 * 1024);
  static const ArchParams kOrin =
      make(0x807, &kQmdV03, 0x160, {0, 8, 16, 32, 64, 100, 132, 164}, 163 * 1024);
  static const ArchParams kAda = make(0x809, &kQmdV03, 0x160, {0, 8, 16, 32, 64, 100}, 99 * 1024);
  static const ArchParams kHopper = [] {
    ArchParams p = make(0x900, &kQmdV04, 0x210, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228},
                        227 * 1024);
    p.shared_section_includes_reserved = true;
    return p;
  }();
  switch (sm_version) {
    case 0x800: return kGa100;
    case 0x806: return kGa10x;
    case 0x807: return kOrin;
    case 0x809: return kAda;
    case 0x900: return kHopper;
    default: {
      char v[16];
      std::snprintf(v, sizeof(v), "0x%x", sm_version);
      throw Error(std::string("no launch parameters for SM version ") + v, "arch_params", 0,
                  "nvhcq supports sm_80, sm_86, sm_87, sm_89 and sm_90");
    }
  }
}

ShaderWindows shader_windows(uint64_t va_limit) {
  uint64_t top = va_limit & ~(ShaderWindows::kSize - 1);
  ShaderWindows w;
  w.local = top - 3 * ShaderWindows::kSize;
  w.shared = top - 2 * ShaderWindows::kSize;
  return w;
}

const QmdLayout* qmd_layout_for_class(uint32_t compute_class) {
  switch (compute_class) {
    case 0xc6c0:  // AMPERE_COMPUTE_A
    case 0xc7c0:  // AMPERE_COMPUTE_B (Orin, GA10x)
    case 0xc9c0:  // ADA_COMPUTE_A
      return &kQmdV03;
    case 0xcbc0:  // HOPPER_COMPUTE_A
      return &kQmdV04;
    default:
      return nullptr;
  }
}

}  // namespace nvhcq::gpu::hw
