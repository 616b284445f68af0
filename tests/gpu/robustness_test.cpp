// The robustness suites on this machine's GPU: edge cases and fault handling
// (tests/cases/edge_cases.cpp, fault_cases.cpp). The stress suite runs from
// test_stress (label stress). Skip without a GPU.

#include "cases/robust_suite.h"

namespace nvhcq::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Gpu, HcqEdges,
                         ::testing::Values(rm_robust_backend(), tegra_robust_backend()),
                         robust_backend_name);
INSTANTIATE_TEST_SUITE_P(Gpu, HcqFaults,
                         ::testing::Values(rm_robust_backend(), tegra_robust_backend()),
                         robust_backend_name);

}  // namespace
}  // namespace nvhcq::testing
