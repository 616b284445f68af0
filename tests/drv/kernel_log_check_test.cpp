// The GPU test binaries' kernel-log check (tests/support/kernel_log.h): which
// lines fail a test, which a test may declare, which belong to other processes.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/kernel_log.h"

namespace nvhcq::testing {
namespace {

std::vector<drv::KernelLogLine> lines(std::initializer_list<const char*> texts) {
  std::vector<drv::KernelLogLine> out;
  for (const char* t : texts) out.push_back(drv::parse_dmesg_line(t));
  return out;
}

const char* kXid31 =
    "NVRM: Xid (PCI:0000:00:06): 31, pid=405, name=test_gpu, channel 0x0000000a, intr 00000000. "
    "MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_6 faulted @ 0xdead00_00000000. Fault is of type "
    "FAULT_PDE ACCESS_TYPE_VIRT_WRITE";
const char* kXid43 = "NVRM: Xid (PCI:0000:00:06): 43, pid=405, name=test_gpu, Ch 0000000a";
const char* kXid13 = "NVRM: Xid (PCI:0000:00:06): 13, pid=405, name=test_gpu, Graphics Exception";
const char* kFbhub =
    "NVRM: gpuClearFbhubPoisonIntrForBug2924523_GA100: FBHUB Interrupt detected. Clearing it.";

TEST(KernelLogCheck, UndeclaredFaultOfThisProcessFailsTheTest) {
  auto j = judge_kernel_log(lines({kFbhub, kXid31, kXid43}), {}, 405);
  EXPECT_EQ(j.unexpected.size(), 2u);
  EXPECT_TRUE(j.expected.empty());
  EXPECT_EQ(j.notes.size(), 1u) << "the FBHUB line is known-harmless";
  EXPECT_NE(j.report("Suite.Test").find("UNEXPECTED: NVRM: Xid (PCI:0000:00:06): 31"),
            std::string::npos)
      << j.report("Suite.Test");
}

TEST(KernelLogCheck, DeclaredXidAndItsChannelResetPass) {
  KernelLogExpectations e;
  e.xids = {31};
  auto j = judge_kernel_log(lines({kXid31, kXid43}), e, 405);
  EXPECT_TRUE(j.unexpected.empty());
  EXPECT_EQ(j.expected.size(), 2u);
  // ... but a different fault in the same window still fails.
  j = judge_kernel_log(lines({kXid31, kXid13}), e, 405);
  ASSERT_EQ(j.unexpected.size(), 1u);
  EXPECT_NE(j.unexpected[0].find("13"), std::string::npos);
}

TEST(KernelLogCheck, AnotherProcessesFaultIsShownNotHeldAgainstTheTest) {
  auto j = judge_kernel_log(lines({kXid31}), {}, 999);
  EXPECT_TRUE(j.unexpected.empty());
  EXPECT_EQ(j.other_process.size(), 1u);
}

TEST(KernelLogCheck, FaultsNamingNoProcessFailUnlessDeclared) {
  const char* gsp = "NVRM: Xid (PCI:0000:00:06): 119, pid='N/A', Timeout waiting for RPC from GSP";
  EXPECT_EQ(judge_kernel_log(lines({gsp}), {}, 1).unexpected.size(), 1u);
  const char* tegra_mmu =
      "nvgpu: 17000000.ga10b gv11b_fb_handle_mmu_fault_common:412 [ERR]  mmu fault: fault_addr_va "
      "0xdead000000";
  EXPECT_EQ(judge_kernel_log(lines({tegra_mmu}), {}, 1).unexpected.size(), 1u);
  KernelLogExpectations e;
  e.xids = {31};  // nvgpu has no Xid codes: the MMU-fault kind stands for it
  EXPECT_TRUE(judge_kernel_log(lines({tegra_mmu}), e, 1).unexpected.empty());
  KernelLogExpectations by_kind;
  by_kind.kinds = {drv::GpuFaultKind::kMmu};
  EXPECT_TRUE(judge_kernel_log(lines({tegra_mmu}), by_kind, 1).unexpected.empty());
}

TEST(KernelLogCheck, QuietWindowHasNoReport) {
  auto j = judge_kernel_log(lines({"systemd[1]: Started something."}), {}, 1);
  EXPECT_EQ(j.report("Suite.Test"), "");
}

TEST(KernelLogCheck, ExpectationsBelongToTheRunningTest) {
  ExpectKernelLogXid(31);
  ExpectKernelLogFault(drv::GpuFaultKind::kCopyEngine);
  KernelLogExpectations e = current_kernel_log_expectations();
  EXPECT_EQ(e.xids, (std::vector<int>{31}));
  ASSERT_EQ(e.kinds.size(), 1u);
  EXPECT_TRUE(e.any());
}

}  // namespace
}  // namespace nvhcq::testing

#include <gtest/gtest-spi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace nvhcq::testing {
namespace {

// The listener end to end, reading a file that stands in for /dev/kmsg: it is
// driven by hand around a window, inside this test, so the failure it adds is
// this test's and can be expected.
class KernelLogListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/nvhcq-kmsg-check-XXXXXX";
    int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = name;
    drv::KernelLogReader::Options o;
    o.kmsg_path = path_;
    o.syslog_fallback = false;
    listener_ = make_kernel_log_listener(o, /*fail=*/true);
    listener_->OnTestProgramStart(*::testing::UnitTest::GetInstance());
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void log_line(const std::string& text) {
    std::ofstream out(path_, std::ios::app);
    out << "3," << ++seq_ << ",1000,-;" << text << "\n";
  }
  const ::testing::TestInfo& info() {
    return *::testing::UnitTest::GetInstance()->current_test_info();
  }
  std::string own(int xid) {
    return "NVRM: Xid (PCI:0000:00:06): " + std::to_string(xid) +
           ", pid=" + std::to_string(getpid()) + ", name=test_drv, channel 0x0000000a";
  }
  std::string path_;
  int seq_ = 0;
  std::unique_ptr<::testing::TestEventListener> listener_;
};

TEST_F(KernelLogListenerTest, UndeclaredFaultFailsTheWindowItAppearsIn) {
  listener_->OnTestStart(info());
  log_line(own(31));
  EXPECT_NONFATAL_FAILURE(listener_->OnTestEnd(info()), "unexpected error line");
}

TEST_F(KernelLogListenerTest, DeclaredFaultAndForeignFaultsPass) {
  listener_->OnTestStart(info());
  ExpectKernelLogXid(31);
  log_line(own(31));
  log_line(own(43));
  log_line("NVRM: Xid (PCI:0000:00:06): 13, pid=1, name=other, Graphics Exception");
  listener_->OnTestEnd(info());  // no failure: declared, its consequence, another process
  listener_->OnTestStart(info());
  EXPECT_TRUE(current_kernel_log_expectations().xids.empty()) << "expectations last one test";
  listener_->OnTestEnd(info());
}

}  // namespace
}  // namespace nvhcq::testing
