// The robustness suites (tests/cases/robust_suite.h) on the simulated RM GPU and
// the simulated Jetson: edge cases, faults, and the stress tests at 1/50 of their
// GPU size (the simulator runs kernels as CPU functions).

#include "cases/robust_suite.h"
#include "sim/sim_backends.h"

namespace nvhcq::testing {
namespace {

RobustBackend sim_robust(bool tegra) {
  RobustBackend b;
  b.name = tegra ? "sim_tegra" : "sim_rm";
  b.open = [tegra](const gpu::DeviceOptions& o) {
    return tegra ? sim::open_sim_tegra(o) : sim::open_sim_rm(o);
  };
  b.unavailable = sim::sim_unavailable;
  b.real_hardware = false;
  return b;
}

INSTANTIATE_TEST_SUITE_P(Sim, HcqEdges, ::testing::Values(sim_robust(false), sim_robust(true)),
                         robust_backend_name);
INSTANTIATE_TEST_SUITE_P(Sim, HcqFaults, ::testing::Values(sim_robust(false), sim_robust(true)),
                         robust_backend_name);
INSTANTIATE_TEST_SUITE_P(Sim, HcqStress, ::testing::Values(sim_robust(false), sim_robust(true)),
                         robust_backend_name);

}  // namespace
}  // namespace nvhcq::testing
