#include "sim/sim_test_util.h"

#include <algorithm>
#include <cstring>

#include "gpu/hw/methods.h"

namespace nvhcq::sim {

HandLaunch build_launch(gpu::Device& dev, const gpu::Program& program,
                        const std::vector<uint8_t>& params, const gpu::LaunchDims& dims,
                        const std::function<void(gpu::Qmd&, std::vector<uint8_t>&)>& edit) {
  const gpu::hw::ArchParams& arch = dev.arch();
  std::vector<uint8_t> bank(program.cbuf0_bytes(), 0);
  auto put32 = [&](uint32_t off, uint32_t v) { std::memcpy(bank.data() + off, &v, 4); };
  auto put64 = [&](uint32_t off, uint64_t v) { std::memcpy(bank.data() + off, &v, 8); };
  for (int i = 0; i < 3; ++i) {
    put32(arch.cbuf0_block_dim + 4 * i, dims.block[i]);
    put32(arch.cbuf0_grid_dim + 4 * i, dims.grid[i]);
  }
  put64(arch.cbuf0_shared_window, dev.windows().shared);
  put64(arch.cbuf0_local_window, dev.windows().local);
  put32(arch.cbuf0_stack_top, arch.stack_top_value);
  std::copy(params.begin(), params.end(), bank.begin() + program.param_base());

  HandLaunch h;
  h.qmd_offset = static_cast<uint32_t>((bank.size() + 255) / 256 * 256);
  h.memory = dev.alloc(h.qmd_offset + 512, true);
  h.qmd_va = h.memory.va() + h.qmd_offset;

  gpu::Qmd q = program.qmd_template();
  const gpu::hw::QmdLayout& l = q.layout();
  q.set_grid(dims.grid[0], dims.grid[1], dims.grid[2]);
  q.set_block(dims.block[0], dims.block[1], dims.block[2]);
  uint32_t shared = program.shared_bytes(dims);
  q.set(l.shared_memory_size, shared);
  uint32_t kib = arch.shared_configs_kib.back();
  for (uint32_t c : arch.shared_configs_kib) {
    if (c != 0 && c * 1024 >= shared) {
      kib = c;
      break;
    }
  }
  q.set(l.min_sm_config_shared_mem_size, kib / 4 + 1);
  q.set(l.target_sm_config_shared_mem_size, kib / 4 + 1);
  q.set(l.max_sm_config_shared_mem_size, arch.shared_configs_kib.back() / 4 + 1);
  q.set(l.shader_local_memory_high_size, dev.local_memory_per_thread());
  q.set_constant_buffer(0, h.memory.va(), static_cast<uint32_t>(bank.size()));
  if (edit) edit(q, bank);
  std::memcpy(h.memory.cpu(), bank.data(), bank.size());
  std::memcpy(h.memory.cpu_as<uint8_t>() + h.qmd_offset, q.data(), q.size());
  return h;
}

gpu::PushBuffer launch_pushbuffer(uint64_t qmd_va) {
  namespace hw = gpu::hw;
  gpu::PushBuffer pb;
  pb.method(hw::kSubchCompute, hw::compute::SEND_PCAS_A, {static_cast<uint32_t>(qmd_va >> 8)});
  pb.method(hw::kSubchCompute, hw::compute::SEND_SIGNALING_PCAS2_B,
            {hw::compute::PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE});
  return pb;
}

}  // namespace nvhcq::sim
