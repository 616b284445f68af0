#include "sim/sim_backends.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "compile/nvrtc_api.h"
#include "drv/rm/rm_gpu.h"
#include "drv/tegra/tegra_gpu.h"
#include "sim/sim_kernels.h"
#include "sim/sim_rm.h"
#include "sim/sim_tegra.h"

namespace nvhcq::sim {
namespace {

// Installs the simulated machine under the syscall seam for the whole run, and
// resets it before each test.
class SimEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { scope_ = std::make_unique<drv::ScopedSys>(&machine()); }
  void TearDown() override { scope_.reset(); }

 private:
  std::unique_ptr<drv::ScopedSys> scope_;
};

class ResetEachTest : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { reset_sim(); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    for (const auto& v : machine().log().violations()) {
      std::fprintf(stderr, "[sim] %s.%s left a violation: %s\n", info.test_suite_name(),
                   info.name(), v.c_str());
    }
    // A failed test shows what the simulated kernel logged (its dmesg).
    if (info.result() != nullptr && info.result()->Failed()) {
      for (const auto& l : machine().log().lines())
        std::fprintf(stderr, "[sim log] %s\n", l.c_str());
    }
  }
};

[[maybe_unused]] const bool kInstalled = [] {
  ::testing::AddGlobalTestEnvironment(new SimEnvironment);
  ::testing::UnitTest::GetInstance()->listeners().Append(new ResetEachTest);
  return true;
}();

}  // namespace

std::string sim_unavailable() {
  if (!compile::nvrtc_available()) {
    return "NVRTC is not installed (the simulator runs kernels it identifies in NVRTC-built "
           "CUBINs)";
  }
  return {};
}

void reset_sim() {
  SimMachine& m = machine();
  m.set_present(true, true);
  m.options().entry_latency_us = 0;
  m.options().hold = false;
  m.options().drop_doorbells = 0;
  m.log().clear();
  m.stats().reset();
  m.tegra().clear_records();
}

namespace {

// Builds the kernel catalog of an architecture on the test's thread, so that the
// simulated GPU thread never waits on NVRTC in the middle of a launch.
void warm_catalog(uint32_t sm_version) {
  if (compile::nvrtc_available()) KernelCatalog::for_sm(sm_version);
}

}  // namespace

std::unique_ptr<gpu::Device> open_sim_rm(const gpu::DeviceOptions& options) {
  warm_catalog(machine().rm().spec().sm_version);
  drv::rm::RmGpuOptions rm;
  rm.compute_ring_entries = std::max<uint32_t>(options.compute_ring_entries, 2);
  rm.copy_ring_entries = std::max<uint32_t>(options.copy_ring_entries, 2);
  return std::make_unique<gpu::Device>(std::make_unique<drv::rm::RmGpu>(0, rm), options);
}

std::unique_ptr<gpu::Device> open_sim_tegra(const gpu::DeviceOptions& options) {
  warm_catalog(machine().tegra().spec().sm_version);
  return std::make_unique<gpu::Device>(std::make_unique<drv::tegra::TegraGpu>(), options);
}

testing::HcqBackend sim_rm_backend() {
  testing::HcqBackend b;
  b.name = "sim_rm";
  b.open = [] { return open_sim_rm(); };
  b.unavailable = sim_unavailable;
  b.real_hardware = false;
  return b;
}

testing::HcqBackend sim_tegra_backend() {
  testing::HcqBackend b;
  b.name = "sim_tegra";
  b.open = [] { return open_sim_tegra(); };
  b.unavailable = sim_unavailable;
  b.real_hardware = false;
  return b;
}

}  // namespace nvhcq::sim
