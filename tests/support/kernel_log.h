#pragma once
// The kernel-log check of the GPU test binaries (test_gpu, test_stress): before
// each test it notes where the kernel log ends; after it, it reads what the GPU
// drivers logged meanwhile (drv/kernel_log.h classifies it) and fails the test
// on error lines its own process caused (RM names the process: "pid=N") or that
// name no process. Another process's errors (ctest runs tests in parallel) are
// shown, not held against the test.
//
// A test that faults the GPU on purpose declares what it expects, and passes:
//
//   ExpectKernelLogXid(31);   // RM Xid 31 (MMU fault); on Jetson, nvgpu's MMU-fault lines
//
// The faults a channel error brings along (Xid 43 channel reset, 45 preemptive
// cleanup; nvgpu channel-recovery lines) are accepted with any expectation.
//
// NVHCQ_KERNEL_LOG_CHECK=0 turns the check off, =warn reports without failing.
// An unreadable log (no permission, no /dev/kmsg) is a notice, not a failure.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "drv/kernel_log.h"
#include "drv/kernel_log_reader.h"

namespace nvhcq::testing {

// The running test deliberately causes RM Xid `code` (or its nvgpu counterpart).
void ExpectKernelLogXid(int code);
// The running test deliberately causes a fault of this kind (either driver).
void ExpectKernelLogFault(drv::GpuFaultKind kind);

// What a test declared it expects.
struct KernelLogExpectations {
  std::vector<int> xids;
  std::vector<drv::GpuFaultKind> kinds;
  bool any() const { return !xids.empty() || !kinds.empty(); }
  // Whether an error line is one of the expected faults or a consequence of one.
  bool covers(const drv::LogVerdict& v) const;
};

// One test's window of the log, judged.
struct KernelLogJudgement {
  std::vector<std::string> unexpected;     // error lines that fail the test
  std::vector<std::string> expected;       // error lines the test declared
  std::vector<std::string> other_process;  // errors another process caused
  std::vector<std::string> notes;          // warnings, known-harmless and info lines
  drv::KernelLogSummary summary;
  // The report printed after the test (empty when the window holds no GPU message).
  std::string report(const std::string& test_name) const;
};
KernelLogJudgement judge_kernel_log(const std::vector<drv::KernelLogLine>& lines,
                                    const KernelLogExpectations& expected, int own_pid);

// Adds the check to this binary's GoogleTest run (once; later calls do nothing).
void install_kernel_log_check();
// The listener itself, reading `log` (tests of the check give it a file); with
// `fail` false it reports without failing.
std::unique_ptr<::testing::TestEventListener> make_kernel_log_listener(
    const drv::KernelLogReader::Options& log, bool fail);
bool kernel_log_check_installed();
// The current test's expectations (for the check and its tests).
KernelLogExpectations current_kernel_log_expectations();

}  // namespace nvhcq::testing
