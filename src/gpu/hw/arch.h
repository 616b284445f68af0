#pragma once
// Per-architecture facts the runtime needs to launch a kernel: the layout of the
// driver-reserved part of constant bank 0, shared-memory configurations, and the
// QMD layout. Keyed by the SM version GR reports (0x900 Hopper, 0x807 Orin...).

#include <cstdint>
#include <vector>

#include "gpu/hw/qmd_layout.h"

namespace nvhcq::gpu::hw {

struct ArchParams {
  uint32_t sm_version = 0;
  uint32_t sass_version = 0;  // QMD SASS_VERSION: 0x90 for sm_90
  const QmdLayout* qmd = nullptr;

  // Constant bank 0 below the kernel parameters holds what the driver provides:
  // blockDim and gridDim (read by the compiled code as c[0][0x0..0x14]), the
  // shared- and local-memory window bases (c[0][0x18], c[0][0x20]) and the initial
  // stack pointer (c[0][0x28]). Parameters start where the cubin says
  // (EIATTR_PARAM_CBANK): 0x160 on Ampere, 0x210 on Hopper.
  uint32_t cbuf0_block_dim = 0x00;
  uint32_t cbuf0_grid_dim = 0x0c;
  uint32_t cbuf0_shared_window = 0x18;
  uint32_t cbuf0_local_window = 0x20;
  uint32_t cbuf0_stack_top = 0x28;
  uint32_t default_param_base = 0x160;

  // The stack starts 0x240 bytes below the top of the 16 MiB local window, so a
  // thread's local memory must cover its stack plus those bytes.
  uint32_t stack_top_value = 0xfffdc0;
  uint32_t stack_reserved_bytes = 0x240;
  // Shared memory the hardware reserves in every CTA (sm_80 and newer). sm_90
  // compilers count it in the kernel's .nv.shared section; earlier ones do not.
  uint32_t reserved_shared_bytes = 1024;
  bool shared_section_includes_reserved = false;
  // Shared-memory carve-outs an SM can be configured with, in KiB, ascending.
  std::vector<uint32_t> shared_configs_kib;
  uint32_t max_shared_per_block = 48 * 1024;  // with opt-in, what one CTA may use

  uint32_t max_threads_per_block = 1024;
  uint32_t max_grid_x = 0x7fffffff, max_grid_y = 65535, max_grid_z = 65535;
  uint32_t max_block_x = 1024, max_block_y = 1024, max_block_z = 64;
  // Registers: 64K per SM, allocated per warp in units of 256.
  uint32_t registers_per_sm = 65536;
  uint32_t register_alloc_unit = 256;
  // Residency limits of one SM.
  uint32_t max_threads_per_sm = 2048;
  uint32_t max_ctas_per_sm = 32;
};

// Throws Error for an SM version nvhcq has no parameters for.
const ArchParams& arch_params(uint32_t sm_version);

// The window bases for a VA space ending at va_limit: two 4 GiB-aligned 4 GiB
// ranges at its top (Tegra's 40-bit space gets 0xFD00000000 and 0xFE00000000).
struct ShaderWindows {
  uint64_t local = 0, shared = 0;
  static constexpr uint64_t kSize = 4ull << 30;
};
ShaderWindows shader_windows(uint64_t va_limit);

}  // namespace nvhcq::gpu::hw
