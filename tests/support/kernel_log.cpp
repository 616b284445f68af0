#include "support/kernel_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "drv/kernel_log_reader.h"

namespace nvhcq::testing {
namespace {

std::mutex& mutex() {
  static std::mutex m;
  return m;
}

KernelLogExpectations& expectations() {
  static KernelLogExpectations e;
  return e;
}

// The fault kind an Xid stands for on nvgpu, which logs no Xid codes.
drv::GpuFaultKind kind_of_xid(int code) {
  return drv::xid_fault_kind(code);
}

bool is_consequence(const drv::LogVerdict& v) {
  // A channel error makes RM reset the channel (43) and clean up its group (45);
  // nvgpu logs its recovery steps as untyped errors.
  if (v.xid == 43 || v.xid == 45) return true;
  return v.xid < 0 &&
         (v.kind == drv::GpuFaultKind::kChannel || v.kind == drv::GpuFaultKind::kOther);
}

std::string format_line(const drv::KernelLogLine& l, const drv::LogVerdict& v) {
  std::string s = l.text;
  if (v.severity != drv::LogSeverity::kInfo) s += "  (" + v.reason + ")";
  return s;
}

enum class Mode { kOff, kWarn, kFail };

Mode mode_from_env() {
  const char* e = std::getenv("NVHCQ_KERNEL_LOG_CHECK");
  if (e == nullptr) return Mode::kFail;
  std::string v = e;
  if (v == "0" || v == "off" || v == "no") return Mode::kOff;
  if (v == "warn") return Mode::kWarn;
  return Mode::kFail;
}

class KernelLogListener : public ::testing::EmptyTestEventListener {
 public:
  KernelLogListener(Mode mode, drv::KernelLogReader::Options log)
      : mode_(mode), log_(std::move(log)) {}

  void OnTestProgramStart(const ::testing::UnitTest&) override {
    reader_ = std::make_unique<drv::KernelLogReader>(drv::KernelLogReader::Start::kNow, log_);
    if (!reader_->available()) {
      std::printf("[kernel-log] not checked: %s\n", reader_->notice().c_str());
    }
  }

  void OnTestStart(const ::testing::TestInfo&) override {
    if (!reader_ || !reader_->available()) return;
    // What arrived between tests belongs to the test before (a late line of a
    // deliberate fault); it can no longer fail that test, so it is shown.
    auto between = reader_->read_new();
    KernelLogJudgement j = judge_kernel_log(between, previous_, getpid());
    if (!j.unexpected.empty()) {
      std::printf("%s", j.report("(between tests, after " + previous_name_ + ")").c_str());
    }
    std::lock_guard<std::mutex> lock(mutex());
    expectations() = {};
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!reader_ || !reader_->available()) return;
    const KernelLogExpectations expected = current_kernel_log_expectations();
    std::vector<drv::KernelLogLine> lines = reader_->read_new();
    if (expected.any()) {
      // The driver logs a fault as it recovers the channel, which the runtime
      // sees at about the same time: give the expected line a moment to appear.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!judge_kernel_log(lines, expected, getpid()).expected.size() &&
             std::chrono::steady_clock::now() < deadline) {
        for (auto& l : reader_->wait_new(std::chrono::milliseconds(100))) lines.push_back(l);
      }
    }
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    KernelLogJudgement j = judge_kernel_log(lines, expected, getpid());
    std::string report = j.report(name);
    if (!report.empty()) std::printf("%s", report.c_str());
    if (!j.unexpected.empty() && mode_ == Mode::kFail) {
      std::string msg = "the GPU driver logged " + std::to_string(j.unexpected.size()) +
                        " unexpected error line(s) during this test:";
      for (const auto& u : j.unexpected) msg += "\n  " + u;
      msg +=
          "\n(a test that faults the GPU on purpose declares it: ExpectKernelLogXid(<code>);"
          " NVHCQ_KERNEL_LOG_CHECK=warn only reports)";
      ADD_FAILURE() << msg;
    }
    previous_ = expected;
    previous_name_ = name;
  }

 private:
  Mode mode_;
  drv::KernelLogReader::Options log_;
  std::unique_ptr<drv::KernelLogReader> reader_;
  KernelLogExpectations previous_;
  std::string previous_name_ = "start";
};

bool& installed() {
  static bool b = false;
  return b;
}

}  // namespace

void ExpectKernelLogXid(int code) {
  std::lock_guard<std::mutex> lock(mutex());
  expectations().xids.push_back(code);
}

void ExpectKernelLogFault(drv::GpuFaultKind kind) {
  std::lock_guard<std::mutex> lock(mutex());
  expectations().kinds.push_back(kind);
}

KernelLogExpectations current_kernel_log_expectations() {
  std::lock_guard<std::mutex> lock(mutex());
  return expectations();
}

bool KernelLogExpectations::covers(const drv::LogVerdict& v) const {
  if (!any()) return false;
  if (v.xid >= 0 && std::find(xids.begin(), xids.end(), v.xid) != xids.end()) return true;
  if (is_consequence(v)) return true;
  // nvgpu (no Xid codes): the kind the expected Xid stands for, or an expected kind.
  if (v.xid < 0) {
    for (int x : xids) {
      if (kind_of_xid(x) == v.kind) return true;
    }
  }
  return std::find(kinds.begin(), kinds.end(), v.kind) != kinds.end();
}

KernelLogJudgement judge_kernel_log(const std::vector<drv::KernelLogLine>& lines,
                                    const KernelLogExpectations& expected, int own_pid) {
  KernelLogJudgement j;
  for (const auto& l : lines) {
    drv::LogVerdict v = drv::classify_kernel_log_line(l.text);
    if (v.severity == drv::LogSeverity::kUnrelated) continue;
    add_to_summary(j.summary, v);
    std::string text = format_line(l, v);
    if (v.severity != drv::LogSeverity::kError) {
      j.notes.push_back(text);
    } else if (v.pid >= 0 && v.pid != own_pid) {
      j.other_process.push_back(text);
    } else if (expected.covers(v)) {
      j.expected.push_back(text);
    } else {
      j.unexpected.push_back(text);
    }
  }
  return j;
}

std::string KernelLogJudgement::report(const std::string& test_name) const {
  if (unexpected.empty() && expected.empty() && other_process.empty() && notes.empty()) return "";
  std::string s = "[kernel-log] " + test_name + ": " + summary.text() + "\n";
  auto section = [&](const char* title, const std::vector<std::string>& v) {
    for (const auto& line : v) s += std::string("[kernel-log]   ") + title + line + "\n";
  };
  section("UNEXPECTED: ", unexpected);
  section("expected: ", expected);
  section("other process: ", other_process);
  section("", notes);
  return s;
}

void install_kernel_log_check() {
  if (installed()) return;
  installed() = true;
  Mode mode = mode_from_env();
  if (mode == Mode::kOff) return;
  // Appended: its OnTestEnd runs before the result printer's, so a failure it
  // adds shows in the test's own result line.
  ::testing::UnitTest::GetInstance()->listeners().Append(
      new KernelLogListener(mode, drv::KernelLogReader::Options()));
}

std::unique_ptr<::testing::TestEventListener> make_kernel_log_listener(
    const drv::KernelLogReader::Options& log, bool fail) {
  return std::make_unique<KernelLogListener>(fail ? Mode::kFail : Mode::kWarn, log);
}

bool kernel_log_check_installed() {
  return installed();
}

}  // namespace nvhcq::testing
