#pragma once
// The compute class of a simulated channel: its state methods (shader windows,
// shader local memory) and launches. SEND_PCAS_A + SEND_SIGNALING_PCAS2_B
// launch the QMD at the given address; the QMD is decoded with the layout of
// the channel's compute class and checked field by field (versions, program
// address and code, constant bank 0 and what it holds, grid and block limits,
// registers, shared and local memory), the kernel runs as a CPU function, the
// QMD's release (if any) is written and its dependent QMD launched next.

#include <cstdint>
#include <vector>

#include "sim/sim_engine.h"

namespace nvhcq::gpu::hw {
struct QmdLayout;
}

namespace nvhcq::sim {

class ComputeUnit {
 public:
  explicit ComputeUnit(SimChannel& channel);
  // A method of the compute class (byte offset, data); throws ChannelFault.
  void method(uint32_t addr, uint32_t data);
  // At first sight of a pushbuffer: snapshots the QMD at `qmd_va`, the QMDs it
  // chains to and their constant banks, so later CPU rewrites are caught.
  static void prescan(SimChannel& channel, uint64_t qmd_va);

  // The window extent the simulated SM treats as shared/local memory.
  static constexpr uint64_t kWindowBytes = 4ull << 30;

 private:
  void launch(uint64_t qmd_va);
  void run_one(uint64_t qmd_va, const std::vector<uint8_t>& qmd, uint64_t* next_qmd);
  void check_local_memory(uint32_t bytes_per_thread) const;
  [[noreturn]] void bad_launch(uint64_t qmd_va, const std::string& why) const;

  SimChannel& ch_;
  const gpu::hw::QmdLayout* layout_;
  uint64_t shared_window_ = 0, local_window_ = 0;
  bool shared_window_set_ = false, local_window_set_ = false;
  uint64_t local_memory_va_ = 0, local_per_tpc_ = 0;
  uint32_t pcas_a_ = 0;
};

}  // namespace nvhcq::sim
