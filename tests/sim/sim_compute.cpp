#include "sim/sim_compute.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "gpu/hw/methods.h"
#include "gpu/hw/qmd_layout.h"
#include "gpu/qmd.h"
#include "sim/sim_kernels.h"

namespace nvhcq::sim {
namespace {

namespace cm = gpu::hw::compute;
using gpu::read_bits;

constexpr uint32_t kReservedSharedBytes = 1024;   // per CTA, on sm_80 and newer
constexpr uint32_t kLocalWindowBytes = 1u << 24;  // a thread's stack grows down from here
constexpr uint64_t kPrefetchBytes = 128;          // instructions fetched past a kernel's end
constexpr int kMaxChain = 1 << 20;

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

// Largest shared-memory carve-out per SM, KiB (CUDA compute-capability tables).
uint32_t max_shared_kib(uint32_t sm) {
  switch (sm) {
    case 0x800:
    case 0x807:
      return 164;
    case 0x900:
      return 228;
    default:
      return 100;
  }
}

uint64_t cbuf_address(const gpu::hw::QmdLayout& l, const uint8_t* q, uint32_t i) {
  uint64_t lo = read_bits(q, l.cbuf_addr_lower.at(i)), hi = read_bits(q, l.cbuf_addr_upper.at(i));
  uint64_t a = lo | (hi << 32);
  return l.cbuf_addr_shifted6 ? a << 6 : a;
}

}  // namespace

ComputeUnit::ComputeUnit(SimChannel& channel)
    : ch_(channel), layout_(gpu::hw::qmd_layout_for_class(channel.spec().compute_class)) {}

void ComputeUnit::bad_launch(uint64_t qmd_va, const std::string& why) const {
  throw ChannelFault{FaultKind::kGraphics, qmd_va,
                     "launch of the QMD at " + hex(qmd_va) + ": " + why};
}

void ComputeUnit::method(uint32_t addr, uint32_t data) {
  switch (addr) {
    case cm::WAIT_FOR_IDLE:
    case cm::INVALIDATE_SHADER_CACHES:
    case cm::INVALIDATE_SHADER_CACHES_NO_WFI:
    case cm::INVALIDATE_SKED_CACHES:
      return;  // the simulated SMs have no caches to go stale
    case cm::SET_SHADER_SHARED_MEMORY_WINDOW_A:
      shared_window_ = (shared_window_ & 0xffffffffu) | (uint64_t{data} << 32);
      return;
    case cm::SET_SHADER_SHARED_MEMORY_WINDOW_B:
      shared_window_ = (shared_window_ & ~0xffffffffull) | data;
      shared_window_set_ = true;
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_WINDOW_A:
      local_window_ = (local_window_ & 0xffffffffu) | (uint64_t{data} << 32);
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_WINDOW_B:
      local_window_ = (local_window_ & ~0xffffffffull) | data;
      local_window_set_ = true;
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_A:
      local_memory_va_ = (local_memory_va_ & 0xffffffffu) | (uint64_t{data} << 32);
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_B:
      local_memory_va_ = (local_memory_va_ & ~0xffffffffull) | data;
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A:
      local_per_tpc_ = (local_per_tpc_ & 0xffffffffu) | (uint64_t{data} << 32);
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B:
      local_per_tpc_ = (local_per_tpc_ & ~0xffffffffull) | data;
      return;
    case cm::SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C:
      return;  // the SM count local memory is sized for: all of them
    case cm::SEND_PCAS_A:
      pcas_a_ = data;
      return;
    case cm::SEND_SIGNALING_PCAS2_B:
      if ((data & 0xf) != cm::PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE) {
        throw ChannelFault{
            FaultKind::kBadMethod, 0,
            "SEND_SIGNALING_PCAS2_B with an action the simulator does not model: " + hex(data)};
      }
      launch(uint64_t{pcas_a_} << 8);
      return;
    default:
      throw ChannelFault{
          FaultKind::kBadMethod, 0,
          "compute class " + hex(ch_.spec().compute_class) + " has no method " + hex(addr)};
  }
}

void ComputeUnit::prescan(SimChannel& ch, uint64_t qmd_va) {
  const gpu::hw::QmdLayout* l = gpu::hw::qmd_layout_for_class(ch.spec().compute_class);
  if (l == nullptr) return;
  for (int n = 0; n < kMaxChain && qmd_va != 0; ++n) {
    std::vector<uint8_t> q(l->size_bytes);
    try {
      ch.as().read(qmd_va, q.data(), q.size());
    } catch (const SimFault&) {
      return;  // reported when the launch runs
    }
    if (read_bits(q.data(), l->cbuf_valid.at(0)) != 0) {
      uint64_t cb = cbuf_address(*l, q.data(), 0);
      uint64_t size = read_bits(q.data(), l->cbuf_size_shifted4.at(0)) * 16;
      std::vector<uint8_t> bank(std::min<uint64_t>(size, 1 << 16));
      try {
        ch.as().read(cb, bank.data(), bank.size());
        ch.watch(cb, std::move(bank), "constant bank 0 of the QMD at " + hex(qmd_va));
      } catch (const SimFault&) {
      }
    }
    bool chained = read_bits(q.data(), l->dependent_qmd0_enable) != 0;
    uint64_t next = read_bits(q.data(), l->dependent_qmd0_pointer) << 8;
    ch.watch(qmd_va, std::move(q), "QMD");
    qmd_va = chained ? next : 0;
  }
}

void ComputeUnit::launch(uint64_t qmd_va) {
  if (layout_ == nullptr) bad_launch(qmd_va, "the channel's compute class has no QMD layout");
  if (!shared_window_set_ || !local_window_set_) {
    bad_launch(qmd_va, "no SET_SHADER_SHARED/LOCAL_MEMORY_WINDOW before the first launch");
  }
  for (int n = 0; n < kMaxChain && qmd_va != 0; ++n) {
    if (qmd_va % 256 != 0) bad_launch(qmd_va, "QMD address is not 256-byte aligned");
    std::vector<uint8_t> q(layout_->size_bytes);
    try {
      ch_.as().read(qmd_va, q.data(), q.size());
    } catch (const SimFault& f) {
      throw ChannelFault{FaultKind::kMmu, f.va, "QMD fetch: " + f.what};
    }
    ch_.check_watched(qmd_va, q, "QMD");
    uint64_t next = 0;
    run_one(qmd_va, q, &next);
    ch_.stats().launches++;
    qmd_va = next;
  }
}

void ComputeUnit::check_local_memory(uint32_t bytes_per_thread) const {
  const GpuSpec& s = ch_.spec();
  uint64_t needed = round_up(
      round_up(uint64_t{bytes_per_thread} * 32, 0x200) * s.max_warps_per_sm * s.sm_per_tpc, 0x8000);
  if (local_memory_va_ == 0 || local_per_tpc_ < needed) {
    throw ChannelFault{FaultKind::kGraphics, local_memory_va_,
                       "shader local memory of " + hex(local_per_tpc_) + " bytes per TPC at " +
                           hex(local_memory_va_) + " is smaller than the " + hex(needed) +
                           " a launch with " + std::to_string(bytes_per_thread) +
                           " bytes per thread needs"};
  }
  // Every TPC's slice must be backed: memory freed while kernels use it faults.
  uint64_t end = local_memory_va_ + local_per_tpc_ * s.num_gpcs * s.tpc_per_gpc;
  for (uint64_t va = local_memory_va_; va < end;) {
    auto m = ch_.as().lookup(va);
    if (!m) {
      throw ChannelFault{FaultKind::kMmu, va,
                         "shader local memory at " + hex(va) +
                             " is not mapped (was it freed or "
                             "replaced while kernels could still use it?)"};
    }
    va = m->va + m->size;
  }
}

void ComputeUnit::run_one(uint64_t qmd_va, const std::vector<uint8_t>& qv, uint64_t* next_qmd) {
  const gpu::hw::QmdLayout& l = *layout_;
  const uint8_t* q = qv.data();
  const GpuSpec& s = ch_.spec();
  auto f = [&](gpu::hw::QmdField field) { return read_bits(q, field); };

  if (f(l.qmd_major_version) != l.major_version) {
    bad_launch(qmd_va, "QMD major version " + std::to_string(f(l.qmd_major_version)) +
                           ", the class takes " + std::to_string(l.major_version));
  }
  // A grid of thread-block clusters (GRID_GPC_CGA) counts clusters.
  uint32_t cluster[3] = {1, 1, 1};
  if (l.qmd_type.present() && f(l.qmd_type) == gpu::hw::kQmdTypeGridGpcCga) {
    cluster[0] = static_cast<uint32_t>(f(l.gpc_cga_width));
    cluster[1] = static_cast<uint32_t>(f(l.gpc_cga_height));
    cluster[2] = static_cast<uint32_t>(f(l.gpc_cga_depth));
    const uint64_t blocks = uint64_t{cluster[0]} * cluster[1] * cluster[2];
    if (blocks == 0 || blocks > gpu::hw::kMaxClusterBlocks) {
      bad_launch(qmd_va, "a cluster of (" + std::to_string(cluster[0]) + "," + std::to_string(cluster[1]) + "," +
                             std::to_string(cluster[2]) + ") blocks");
    }
  } else if (l.qmd_type.present() && f(l.qmd_type) != gpu::hw::kQmdTypeGridCta) {
    bad_launch(qmd_va, "QMD type " + std::to_string(f(l.qmd_type)) + " is neither GRID_CTA nor GRID_GPC_CGA");
  }
  uint32_t sass = ((s.sm_version & 0xf00) >> 4) | (s.sm_version & 0xf);
  if (f(l.sass_version) != sass) {
    bad_launch(qmd_va,
               "SASS version " + hex(f(l.sass_version)) + " on an SM of version " + hex(sass));
  }
  uint32_t grid[3] = {static_cast<uint32_t>(f(l.grid_width)) * cluster[0],
                      static_cast<uint32_t>(f(l.grid_height)) * cluster[1],
                      static_cast<uint32_t>(f(l.grid_depth)) * cluster[2]};
  uint32_t block[3] = {static_cast<uint32_t>(f(l.cta_thread_dimension0)),
                       static_cast<uint32_t>(f(l.cta_thread_dimension1)),
                       static_cast<uint32_t>(f(l.cta_thread_dimension2))};
  uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || grid[0] > 0x7fffffffu || grid[1] > 65535 ||
      grid[2] > 65535) {
    bad_launch(qmd_va, "grid (" + std::to_string(grid[0]) + "," + std::to_string(grid[1]) + "," +
                           std::to_string(grid[2]) + ") is outside the hardware's limits");
  }
  if (threads == 0 || threads > 1024 || block[0] > 1024 || block[1] > 1024 || block[2] > 64) {
    bad_launch(qmd_va, "block (" + std::to_string(block[0]) + "," + std::to_string(block[1]) + "," +
                           std::to_string(block[2]) + ") is outside the hardware's limits");
  }

  // The program: known machine code, with room for the instruction prefetch.
  uint64_t pc = f(l.program_address_lower) | (f(l.program_address_upper) << 32);
  if (!ch_.as().lookup(pc)) {
    throw ChannelFault{FaultKind::kMmu, pc,
                       "instruction fetch from unmapped GPU VA " + hex(pc) +
                           " (program memory freed while launches were queued?)"};
  }
  const KernelDef* k = nullptr;
  try {
    k = KernelCatalog::for_sm(s.sm_version).identify(ch_.as(), pc);
  } catch (const Error& e) {
    bad_launch(qmd_va, std::string("the simulator cannot identify programs: ") + e.what());
  }
  if (k == nullptr) bad_launch(qmd_va, "no known kernel's code at the program address " + hex(pc));
  try {
    std::vector<uint8_t> tail(kPrefetchBytes);
    ch_.as().read(pc + k->code.size(), tail.data(), tail.size());
  } catch (const SimFault& e) {
    throw ChannelFault{FaultKind::kMmu, e.va,
                       "instruction prefetch past the end of " + k->name + ": " + e.what};
  }

  // Registers: per thread as compiled, per block within the SM's register file.
  uint32_t regs = static_cast<uint32_t>(f(l.register_count));
  if (regs < k->info.registers || regs > 255) {
    bad_launch(qmd_va, k->name + " needs " + std::to_string(k->info.registers) +
                           " registers per thread; the QMD gives " + std::to_string(regs));
  }
  uint64_t warps = (threads + 31) / 32;
  if (round_up(uint64_t{regs} * 32, 256) * warps > 65536) {
    bad_launch(qmd_va, "too many registers for the block: " + std::to_string(regs) + " x " +
                           std::to_string(threads) + " threads");
  }

  // Constant bank 0: valid, mapped, large enough, holding what the driver provides.
  if (f(l.cbuf_valid.at(0)) == 0) bad_launch(qmd_va, "constant buffer 0 is not valid");
  uint64_t cb = cbuf_address(l, q, 0);
  uint64_t cb_size = f(l.cbuf_size_shifted4.at(0)) * 16;
  uint32_t param_base = k->info.param_base;
  if (cb_size < 0x30 || cb_size > (1u << 16) ||
      (k->info.param_bytes != 0 && cb_size < param_base + k->info.param_bytes)) {
    bad_launch(qmd_va, "constant buffer 0 of " + std::to_string(cb_size) + " bytes cannot hold " +
                           k->name + "'s parameters at " + hex(param_base));
  }
  std::vector<uint8_t> bank(cb_size);
  try {
    ch_.as().read(cb, bank.data(), bank.size());
  } catch (const SimFault& e) {
    throw ChannelFault{FaultKind::kMmu, e.va, "constant buffer 0 fetch: " + e.what};
  }
  ch_.check_watched(cb, bank, "constant bank 0 of the QMD at " + hex(qmd_va));
  auto u32 = [&](uint32_t off) {
    uint32_t v;
    std::memcpy(&v, bank.data() + off, 4);
    return v;
  };
  auto u64 = [&](uint32_t off) {
    uint64_t v;
    std::memcpy(&v, bank.data() + off, 8);
    return v;
  };
  for (int i = 0; i < 3; ++i) {
    if (u32(0x0 + 4 * i) != block[i] || u32(0xc + 4 * i) != grid[i]) {
      bad_launch(qmd_va, "blockDim/gridDim in constant buffer 0 (" + std::to_string(u32(0)) + "," +
                             std::to_string(u32(4)) + "," + std::to_string(u32(8)) + " / " +
                             std::to_string(u32(0xc)) + "," + std::to_string(u32(0x10)) + "," +
                             std::to_string(u32(0x14)) + ") do not match the QMD's");
    }
  }
  if (u64(0x18) != shared_window_ || u64(0x20) != local_window_) {
    bad_launch(qmd_va, "constant buffer 0 names shader windows " + hex(u64(0x18)) + "/" +
                           hex(u64(0x20)) + ", the channel set " + hex(shared_window_) + "/" +
                           hex(local_window_));
  }

  // Shared memory: enough for the kernel, within a carve-out the SM can have.
  uint32_t smem = static_cast<uint32_t>(f(l.shared_memory_size));
  bool section_has_reserved = s.sm_version >= 0x900;
  uint32_t fixed = section_has_reserved
                       ? std::max(k->info.static_shared_bytes, kReservedSharedBytes)
                       : k->info.static_shared_bytes + kReservedSharedBytes;
  uint32_t target = static_cast<uint32_t>(f(l.target_sm_config_shared_mem_size));
  uint32_t lo = static_cast<uint32_t>(f(l.min_sm_config_shared_mem_size));
  uint32_t hi = static_cast<uint32_t>(f(l.max_sm_config_shared_mem_size));
  if (smem < fixed) {
    bad_launch(qmd_va, k->name + " needs " + std::to_string(fixed) +
                           " bytes of shared memory; the QMD gives " + std::to_string(smem));
  }
  if (target == 0 || lo > target || target > hi || (target - 1) * 4096u < smem ||
      (hi - 1) * 4 > max_shared_kib(s.sm_version)) {
    bad_launch(qmd_va, "shared memory configuration (min " + std::to_string(lo) + ", target " +
                           std::to_string(target) + ", max " + std::to_string(hi) +
                           ") does not fit " + std::to_string(smem) + " bytes on this SM");
  }

  // Named barriers: an id at or past the QMD's count is an SM warp exception
  // (Illegal Instruction Parameter, Xid 13) on the first bar.sync that uses it.
  if (f(l.barrier_count) < k->info.barriers) {
    throw ChannelFault{FaultKind::kGraphics, qmd_va,
                       "kernel " + k->name + " uses " + std::to_string(k->info.barriers) +
                           " named barriers; the QMD grants " + std::to_string(f(l.barrier_count)) +
                           " (Illegal Instruction Parameter)"};
  }

  // Local memory: the thread's stack starts at the top of its window, below the
  // stack-top word of constant bank 0; the whole of it must be backed.
  uint32_t stack_top = u32(0x28);
  uint32_t lmem = static_cast<uint32_t>(f(l.shader_local_memory_high_size)) +
                  static_cast<uint32_t>(f(l.shader_local_memory_low_size));
  if (k->info.local_bytes_per_thread != 0 || lmem != 0) {
    if (stack_top == 0 || stack_top > kLocalWindowBytes ||
        lmem < k->info.local_bytes_per_thread + (kLocalWindowBytes - stack_top)) {
      bad_launch(qmd_va, k->name + " uses " + std::to_string(k->info.local_bytes_per_thread) +
                             " bytes of local memory below a stack top of " + hex(stack_top) +
                             "; the QMD gives " + std::to_string(lmem) + " per thread");
    }
    check_local_memory(lmem);
  }

  KernelCall call;
  std::copy(grid, grid + 3, call.grid);
  std::copy(block, block + 3, call.block);
  std::copy(cluster, cluster + 3, call.cluster);
  if (k->info.param_bytes != 0) {
    call.params.assign(bank.begin() + param_base, bank.begin() + param_base + k->info.param_bytes);
  }
  call.param_offsets = k->info.param_offsets;
  call.dynamic_shared_bytes = smem - fixed;
  GlobalMemory memory(ch_.as(), shared_window_, local_window_, kWindowBytes);
  call.memory = &memory;
  try {
    k->body(call);
  } catch (const SimFault& e) {
    throw ChannelFault{FaultKind::kMmu, e.va, "kernel " + k->name + ": " + e.what};
  } catch (const KernelException& e) {
    throw ChannelFault{FaultKind::kGraphics, qmd_va, "kernel " + k->name + ": " + e.what};
  }

  if (f(l.release0_enable) != 0) {
    uint64_t va = f(l.release0_address_lower) | (f(l.release0_address_upper) << 32);
    uint64_t payload = f(l.release0_payload_lower);
    bool wide = f(l.release0_payload64b) != 0;
    if (wide) payload |= f(l.release0_payload_upper) << 32;
    ch_.before_release();
    try {
      if (wide) {
        ch_.as().store64(va, payload);
      } else {
        ch_.as().store32(va, static_cast<uint32_t>(payload));
      }
      if (f(l.release0_structure_size) == gpu::hw::kReleaseStructureSizeFourWords) {
        ch_.as().store64(va + 8, static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
      }
    } catch (const SimFault& e) {
      throw ChannelFault{FaultKind::kMmu, e.va, "QMD release: " + e.what};
    }
    ch_.stats().qmd_releases++;
  }
  if (f(l.dependent_qmd0_enable) != 0) {
    if (f(l.dependent_qmd0_action) != gpu::hw::kDependentQmdActionSchedule) {
      bad_launch(qmd_va, "dependent QMD action " + std::to_string(f(l.dependent_qmd0_action)) +
                             " is not SCHEDULE");
    }
    *next_qmd = f(l.dependent_qmd0_pointer) << 8;
  }
}

}  // namespace nvhcq::sim
