#pragma once
// The HCQ backends of the simulated GPUs, and what tests need to drive the
// simulator: opening devices on each front end, and its knobs and counters.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpu/device.h"
#include "sim/sim_machine.h"
#include "support/hcq_backend.h"

namespace nvhcq::sim {

// Empty when the simulator can run kernels here, else why tests skip (the
// simulator identifies kernels by their code in NVRTC-built CUBINs).
std::string sim_unavailable();

std::unique_ptr<gpu::Device> open_sim_rm(const gpu::DeviceOptions& options = {});
std::unique_ptr<gpu::Device> open_sim_tegra(const gpu::DeviceOptions& options = {});

testing::HcqBackend sim_rm_backend();
testing::HcqBackend sim_tegra_backend();

// Back to defaults between tests: both front ends present, no latency, empty
// log and counters.
void reset_sim();

}  // namespace nvhcq::sim
