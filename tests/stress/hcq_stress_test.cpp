// test_stress (ctest label `stress`, left out of `make test`): the HCQ stress
// suite (tests/cases/stress_cases.cpp) on this machine's GPU, with the kernel-log
// check of test_gpu. Run on the GPU machine:
//   ctest --test-dir build -L stress          (or: make test-stress)
//   NVHCQ_STRESS_SCALE=0.1 NVHCQ_STRESS_SECONDS=5 build/tests/test_stress   (a quick version)

#include "cases/robust_suite.h"
#include "support/kernel_log.h"

namespace nvhcq::testing {
namespace {

[[maybe_unused]] const bool kInstalled = [] {
  install_kernel_log_check();
  return true;
}();

INSTANTIATE_TEST_SUITE_P(Gpu, HcqStress,
                         ::testing::Values(rm_robust_backend(), tegra_robust_backend()),
                         robust_backend_name);

}  // namespace
}  // namespace nvhcq::testing
