#pragma once
// Helpers shared by the simulator's own tests: a fixture parameterized by front
// end ("rm" or "tegra"), hand-built launches for fault injection, and the way
// each front end names a channel error.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/program.h"
#include "gpu/pushbuffer.h"
#include "gpu/qmd.h"
#include "sim/sim_backends.h"
#include "sim/sim_machine.h"

namespace nvhcq::sim {

class SimDeviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why = sim_unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
  }
  void TearDown() override { dev.reset(); }

  bool tegra() const { return GetParam() == "tegra"; }
  void open(const gpu::DeviceOptions& options = {}) {
    dev = tegra() ? open_sim_tegra(options) : open_sim_rm(options);
  }
  gpu::Program load(const std::string& kernel) {
    return gpu::Program::embedded(*dev, "selftest.cu", kernel);
  }
  // The text a channel error of `code` carries: "Xid 31" (RM), "channel error 31" (nvgpu).
  std::string error_text(uint32_t code) const {
    return (tegra() ? "channel error " : "Xid ") + std::to_string(code);
  }
  std::vector<uint32_t> read_u32(const gpu::Buffer& b, size_t n) {
    std::vector<uint32_t> out(n);
    dev->download(out.data(), b, 0, n * 4);
    return out;
  }
  SimMachine& sim() { return machine(); }

  std::unique_ptr<gpu::Device> dev;
};

inline std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

// A launch put together by hand (what ComputeQueue::encode does), so that tests
// can corrupt one field and see the simulated GPU refuse it.
struct HandLaunch {
  gpu::Buffer memory;  // constant bank 0 at +0, the QMD at +qmd_offset
  uint64_t qmd_va = 0;
  uint32_t qmd_offset = 0;
};

// Writes constant bank 0 and a QMD for `program` into fresh CPU-visible memory,
// lets `edit` change the QMD and the bank, and returns where they are.
HandLaunch build_launch(
    gpu::Device& dev, const gpu::Program& program, const std::vector<uint8_t>& params,
    const gpu::LaunchDims& dims,
    const std::function<void(gpu::Qmd&, std::vector<uint8_t>& bank)>& edit = {});

// A pushbuffer that launches the QMD at `qmd_va` (SEND_PCAS_A + SEND_SIGNALING_PCAS2_B).
gpu::PushBuffer launch_pushbuffer(uint64_t qmd_va);

}  // namespace nvhcq::sim
