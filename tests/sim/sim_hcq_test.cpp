// The HCQ runtime suite (tests/cases/hcq_cases.cpp), unchanged, on the
// simulated RM GPU and the simulated Jetson.

#include "cases/hcq_suite.h"
#include "sim/sim_backends.h"

namespace nvhcq::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(SimRm, HcqSuite, ::testing::Values(sim::sim_rm_backend()), backend_name);
INSTANTIATE_TEST_SUITE_P(SimTegra, HcqSuite, ::testing::Values(sim::sim_tegra_backend()),
                         backend_name);

}  // namespace
}  // namespace nvhcq::testing
