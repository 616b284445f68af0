// Installs the kernel-log check (tests/support/kernel_log.h) in test_gpu: every
// test here fails on GPU error lines it causes without declaring them.

#include <gtest/gtest.h>

#include "drv/kernel_log_reader.h"
#include "support/kernel_log.h"

namespace nvhcq::testing {
namespace {

[[maybe_unused]] const bool kInstalled = [] {
  install_kernel_log_check();
  return true;
}();

TEST(KernelLogCheck, IsInstalledInThisBinary) {
  EXPECT_TRUE(kernel_log_check_installed());
  drv::KernelLogReader reader;
  if (!reader.available()) {
    std::printf("kernel log unreadable here, tests are not checked: %s\n", reader.notice().c_str());
  } else {
    std::printf("kernel log read from %s\n", reader.source().c_str());
  }
}

}  // namespace
}  // namespace nvhcq::testing
