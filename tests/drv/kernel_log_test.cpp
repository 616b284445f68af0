// The kernel-log classifier on real driver messages (H200 RM 580.x lines, Jetson
// nvgpu lines from the seeds' logs), the record parsers, and the reader on files
// and on this machine's /dev/kmsg.

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "drv/kernel_log.h"
#include "drv/kernel_log_reader.h"

namespace nvhcq::drv {
namespace {

TEST(KernelLogClassifier, RmMmuFaultXidIsAnErrorNamingProcessAndFault) {
  LogVerdict v = classify_kernel_log_line(
      "NVRM: Xid (PCI:0000:00:06): 31, pid=405, name=test_gpu, channel 0x0000000a, intr "
      "00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_6 faulted @ 0xdead00_00000000. "
      "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE");
  EXPECT_EQ(v.severity, LogSeverity::kError);
  EXPECT_EQ(v.source, "NVRM");
  EXPECT_EQ(v.xid, 31);
  EXPECT_EQ(v.kind, GpuFaultKind::kMmu);
  EXPECT_EQ(v.bus_id, "0000:00:06");
  EXPECT_EQ(v.pid, 405);
  EXPECT_EQ(v.process, "test_gpu");
  EXPECT_NE(v.reason.find("MMU fault"), std::string::npos) << v.reason;
}

TEST(KernelLogClassifier, FbhubInterruptClearedAtBootIsKnownHarmless) {
  LogVerdict v = classify_kernel_log_line(
      "NVRM: gpuClearFbhubPoisonIntrForBug2924523_GA100: FBHUB Interrupt detected. Clearing it.");
  EXPECT_EQ(v.severity, LogSeverity::kHarmless);
  EXPECT_EQ(v.xid, -1);
  v = classify_kernel_log_line(
      "NVRM: Persistence mode is deprecated and will be removed in a future release. Please use "
      "nvidia-persistenced instead.");
  EXPECT_EQ(v.severity, LogSeverity::kHarmless);
}

TEST(KernelLogClassifier, XidCodesCarryTheirMeaningAndSeverity) {
  struct Case {
    const char* line;
    int xid;
    LogSeverity severity;
    GpuFaultKind kind;
    int pid;
  };
  const Case cases[] = {
      {"[ 812.113034] NVRM: Xid (PCI:0000:65:00): 119, pid='N/A', Timeout waiting for RPC from "
       "GSP",
       119, LogSeverity::kError, GpuFaultKind::kFirmware, -1},
      {"NVRM: Xid (PCI:0000:00:06): 13, pid=77, name=python3, Graphics Exception: ESR 0x504648=0x1",
       13, LogSeverity::kError, GpuFaultKind::kGraphics, 77},
      {"NVRM: Xid (PCI:0000:00:06): 43, pid=405, name=test_gpu, Ch 0000000a", 43,
       LogSeverity::kError, GpuFaultKind::kChannel, 405},
      {"NVRM: Xid (PCI:0000:00:06): 45, pid=405, name=test_gpu, Ch 0000000b", 45,
       LogSeverity::kError, GpuFaultKind::kChannel, 405},
      {"NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
       "bus.",
       79, LogSeverity::kError, GpuFaultKind::kBus, -1},
      {"NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, An uncorrectable double bit error", 48,
       LogSeverity::kError, GpuFaultKind::kMemory, 1},
      {"NVRM: Xid (PCI:0000:3b:00): 63, pid=1, name=x, Row Remapper: New row marked for remapping",
       63, LogSeverity::kWarning, GpuFaultKind::kMemory, 1},
      {"NVRM: Xid (PCI:0000:3b:00): 94, pid=9, name=x, Contained: SM (0x1). RST: No, D-RST: No", 94,
       LogSeverity::kError, GpuFaultKind::kMemory, 9},
      {"NVRM: Xid (PCI:0000:3b:00): 95, pid=9, name=x, Uncontained: FBHUB. RST: Yes", 95,
       LogSeverity::kError, GpuFaultKind::kMemory, 9},
      {"NVRM: Xid (PCI:0000:01:00): 109, pid=3, name=x, Ch 00000010, errorString CTX SWITCH "
       "TIMEOUT",
       109, LogSeverity::kError, GpuFaultKind::kTimeout, 3},
      {"NVRM: Xid (0000:03:00): 14, Channel 00000001", 14, LogSeverity::kError,
       GpuFaultKind::kOther, -1},
  };
  for (const auto& c : cases) {
    LogVerdict v = classify_kernel_log_line(c.line);
    EXPECT_EQ(v.xid, c.xid) << c.line;
    EXPECT_EQ(v.severity, c.severity) << c.line;
    EXPECT_EQ(v.kind, c.kind) << c.line;
    EXPECT_EQ(v.pid, c.pid) << c.line;
  }
  EXPECT_NE(xid_meaning(32).find("pushbuffer"), std::string::npos);
  EXPECT_NE(xid_meaning(79).find("fallen off the bus"), std::string::npos);
  EXPECT_NE(xid_meaning(120).find("GSP"), std::string::npos);
  EXPECT_NE(xid_meaning(64).find("failed"), std::string::npos);
  EXPECT_NE(xid_meaning(69).find("class"), std::string::npos);
  EXPECT_NE(xid_meaning(12345).find("unlisted"), std::string::npos);
}

TEST(KernelLogClassifier, TegraNvgpuErrorsAndSmStateLines) {
  struct Case {
    const char* line;
    LogSeverity severity;
    GpuFaultKind kind;
  };
  const Case cases[] = {
      {"nvgpu: sm machine check err. gpc_id(0), tpc_id(0)", LogSeverity::kError,
       GpuFaultKind::kGraphics},
      {"hww_global_esr 4 (MULTIPLE_WARP_ERRORS)", LogSeverity::kError, GpuFaultKind::kGraphics},
      {"hww_warp_esr 0x10 (MISALIGNED_ADDR)", LogSeverity::kError, GpuFaultKind::kGraphics},
      {"nvgpu: 17000000.ga10b gv11b_fb_handle_mmu_fault_common:412 [ERR]  mmu fault: "
       "fault_addr_va 0xdead000000",
       LogSeverity::kError, GpuFaultKind::kMmu},
      {"nvgpu: 17000000.ga10b  ga10b_pbdma_handle_intr_0:301 [ERR]  pbdma_intr_0(0): 0x00040000",
       LogSeverity::kError, GpuFaultKind::kPushbuffer},
      {"nvgpu: 17000000.ga10b  gv11b_gr_intr_handle_sked_exception [ERR] sked exception esr "
       "0x00000100",
       LogSeverity::kError, GpuFaultKind::kGraphics},
      {"nvgpu: 17000000.ga10b  gk20a_channel_timeout_handler:1471 [ERR]  Job on channel 507 timed "
       "out",
       LogSeverity::kError, GpuFaultKind::kTimeout},
      {"nvgpu: 17000000.ga10b tu104_gr_init_commit_rtv_cb:96 [ERR] RTV circular buffer is not "
       "supported",
       LogSeverity::kHarmless, GpuFaultKind::kNone},
      {"nvgpu: 17000000.ga10b  nvgpu_channel_open_new:1234 [WRN] deterministic channel busy",
       LogSeverity::kWarning, GpuFaultKind::kNone},
      {"nvmap_alloc_handle: PID 1234: python3: WARNING: All NvMap Allocations must have a tag",
       LogSeverity::kWarning, GpuFaultKind::kNone},
      {"nvgpu: 17000000.ga10b  gk20a_pm_finalize_poweron:810 [INFO] GPU is powered on",
       LogSeverity::kInfo, GpuFaultKind::kNone},
  };
  for (const auto& c : cases) {
    LogVerdict v = classify_kernel_log_line(c.line);
    EXPECT_EQ(v.severity, c.severity) << c.line << " -> " << severity_name(v.severity);
    EXPECT_EQ(v.kind, c.kind) << c.line << " -> " << fault_kind_name(v.kind);
    EXPECT_EQ(v.xid, -1) << c.line;
  }
}

TEST(KernelLogClassifier, OtherDriverLinesAreInfoAndTheRestUnrelated) {
  EXPECT_EQ(classify_kernel_log_line("NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  "
                                     "580.159.04  Release Build")
                .severity,
            LogSeverity::kInfo);
  EXPECT_EQ(classify_kernel_log_line("nvidia-uvm: Loaded the UVM driver, major device number 510.")
                .severity,
            LogSeverity::kInfo);
  EXPECT_EQ(classify_kernel_log_line(
                "NVRM: GPU at PCI:0000:00:06: GPU-1f2e3d4c-0000-1111-2222-333344445555")
                .severity,
            LogSeverity::kInfo);
  EXPECT_EQ(
      classify_kernel_log_line("NVRM: nvAssertFailedNoLog: Assertion failed: 0 @ rs_server.c:259")
          .severity,
      LogSeverity::kWarning);
  LogVerdict v = classify_kernel_log_line("Linux version 6.18.44 (builder@sandboxing)");
  EXPECT_EQ(v.severity, LogSeverity::kUnrelated);
  EXPECT_TRUE(v.source.empty());
  EXPECT_EQ(classify_kernel_log_line("EXT4-fs error (device sda1): bad block").severity,
            LogSeverity::kUnrelated)
      << "errors of other subsystems are not GPU errors";
}

TEST(KernelLogClassifier, SummaryCountsSeveritiesAndXids) {
  KernelLogSummary s;
  for (const char* line :
       {"NVRM: Xid (PCI:0000:00:06): 31, pid=1, name=a, MMU Fault",
        "NVRM: Xid (PCI:0000:00:06): 43, pid=1, name=a, Ch 1",
        "NVRM: Xid (PCI:0000:00:06): 31, pid=2, name=b, MMU Fault",
        "NVRM: gpuClearFbhubPoisonIntrForBug2924523_GA100: FBHUB Interrupt detected. Clearing it.",
        "nvidia-uvm: Loaded the UVM driver", "kernel: something else"}) {
    add_to_summary(s, classify_kernel_log_line(line));
  }
  EXPECT_EQ(s.errors, 3u);
  EXPECT_EQ(s.harmless, 1u);
  EXPECT_EQ(s.info, 1u);
  EXPECT_EQ(s.xids, (std::vector<int>{31, 43}));
  EXPECT_EQ(s.text(), "3 errors (Xid 31, 43), 0 warnings, 1 known-harmless, 1 info");
}

TEST(KernelLogParsers, KmsgRecordsAndDmesgLines) {
  KernelLogLine l;
  ASSERT_TRUE(parse_kmsg_record(
      "4,1234,5678901,-;NVRM: Xid (PCI:0000:00:06): 43, pid=405, name=test_gpu, Ch 0000000a\n"
      " SUBSYSTEM=pci\n DEVICE=+pci:0000:00:06.0",
      &l));
  EXPECT_EQ(l.priority, 4);
  EXPECT_EQ(l.seq, 1234u);
  EXPECT_EQ(l.usec, 5678901u);
  EXPECT_EQ(l.text, "NVRM: Xid (PCI:0000:00:06): 43, pid=405, name=test_gpu, Ch 0000000a");
  ASSERT_TRUE(parse_kmsg_record("14,5,10,c,extra;hello", &l)) << "facility bits and more fields";
  EXPECT_EQ(l.priority, 6);
  EXPECT_EQ(l.text, "hello");
  EXPECT_FALSE(parse_kmsg_record("[   12.5] not a record", &l));
  EXPECT_FALSE(parse_kmsg_record("x,1,2,-;text", &l));

  l = parse_dmesg_line("<4>[   12.500000] NVRM: something");
  EXPECT_EQ(l.priority, 4);
  EXPECT_EQ(l.usec, 12500000u);
  EXPECT_EQ(l.text, "NVRM: something");
  l = parse_dmesg_line("[Thu Nov 20 04:27:01 2025] NVRM: human time");
  EXPECT_EQ(l.text, "[Thu Nov 20 04:27:01 2025] NVRM: human time") << "not a number: kept";
  EXPECT_EQ(parse_dmesg_line("plain text").text, "plain text");
}

class KernelLogFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/nvhcq-kmsg-XXXXXX";
    int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = name;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void append(const std::string& text) {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << text;
  }
  KernelLogReader::Options options() const {
    KernelLogReader::Options o;
    o.kmsg_path = path_;
    o.syslog_fallback = false;
    return o;
  }
  std::string path_;
};

TEST_F(KernelLogFile, ReadsOnlyWhatArrivesAfterTheStart) {
  append("6,1,100,-;old message\n");
  KernelLogReader r(KernelLogReader::Start::kNow, options());
  ASSERT_TRUE(r.available()) << r.notice();
  EXPECT_TRUE(r.read_new().empty()) << "what was logged before the reader started is skipped";
  append("3,2,200,-;NVRM: Xid (PCI:0000:00:06): 31, pid=9, name=t, MMU Fault\n SUBSYSTEM=pci\n");
  append("6,3,300,-;second\n");
  auto lines = r.read_new();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].seq, 2u);
  EXPECT_EQ(classify_kernel_log_line(lines[0].text).xid, 31);
  EXPECT_EQ(lines[1].text, "second");
  EXPECT_TRUE(r.read_new().empty());
  // A line written in two parts is returned once it is whole.
  append("6,4,400,-;half");
  EXPECT_TRUE(r.read_new().empty());
  append(" and half\n");
  lines = r.read_new();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "half and half");
}

TEST_F(KernelLogFile, FromBootReadsEverythingIncludingDmesgText) {
  append("[    1.000000] NVRM: loading NVIDIA UNIX Open Kernel Module\n");
  append(
      "<3>[    2.000000] NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU "
      "has fallen off the bus.\n");
  KernelLogReader r(KernelLogReader::Start::kBoot, options());
  auto lines = r.read_new();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].usec, 1000000u);
  EXPECT_EQ(lines[1].priority, 3);
  EXPECT_EQ(classify_kernel_log_line(lines[1].text).xid, 79);
}

TEST_F(KernelLogFile, WaitNewReturnsAtTheTimeoutWhenNothingArrives) {
  KernelLogReader r(KernelLogReader::Start::kNow, options());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(r.wait_new(std::chrono::milliseconds(150)).empty());
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(140));
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST(KernelLogReader, UnreadableLogIsANoticeNotAFailure) {
  KernelLogReader::Options o;
  o.kmsg_path = "/nonexistent/kmsg";
  o.syslog_fallback = false;
  KernelLogReader r(KernelLogReader::Start::kNow, o);
  EXPECT_FALSE(r.available());
  EXPECT_NE(r.notice().find("/nonexistent/kmsg"), std::string::npos) << r.notice();
  EXPECT_TRUE(r.read_new().empty());
  EXPECT_TRUE(r.wait_new(std::chrono::milliseconds(10)).empty());
}

TEST(KernelLogReader, ReadsThisMachinesLogSinceBoot) {
  KernelLogReader r(KernelLogReader::Start::kBoot);
  if (!r.available()) GTEST_SKIP() << r.notice();
  auto lines = r.read_new();
  ASSERT_FALSE(lines.empty()) << "the kernel log of a running machine is never empty ("
                              << r.source() << ")";
  size_t with_text = 0;
  for (const auto& l : lines) with_text += l.text.empty() ? 0 : 1;
  EXPECT_GT(with_text, 0u);
  if (r.source() == "/dev/kmsg") {
    EXPECT_LE(lines.front().seq, lines.back().seq) << "records come in sequence order";
  }
  KernelLogReader now(KernelLogReader::Start::kNow);
  auto start = std::chrono::steady_clock::now();
  now.wait_new(std::chrono::milliseconds(50));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(KernelLogReader, SyslogBufferFallbackWhenKmsgCannotBeOpened) {
  KernelLogReader::Options o;
  o.kmsg_path = "/nonexistent/kmsg";
  KernelLogReader r(KernelLogReader::Start::kBoot, o);
  if (!r.available()) GTEST_SKIP() << r.notice();
  EXPECT_EQ(r.source(), "syslog buffer");
  auto lines = r.read_new();
  EXPECT_FALSE(lines.empty());
  // What was read is not read again (only lines logged meanwhile come back).
  auto again = r.read_new();
  if (lines.size() >= 10) {
    EXPECT_LT(again.size(), lines.size() / 2);
  }
}

}  // namespace
}  // namespace nvhcq::drv

namespace nvhcq::drv {
namespace {

TEST_F(KernelLogFile, RecentGpuErrorsAreThisProcessesAndTheUnattributedOnesOfTheWindow) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t us = static_cast<uint64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  const std::string me = std::to_string(getpid());
  auto record = [&](uint64_t usec, const std::string& text) {
    append("3,1," + std::to_string(usec) + ",-;" + text + "\n");
  };
  record(us - 120000000, "NVRM: Xid (PCI:0000:00:06): 31, pid=" + me + ", name=t, old fault");
  record(us - 1000000,
         "NVRM: Xid (PCI:0000:00:06): 31, pid=" + me + ", name=t, MMU Fault: ENGINE CE3");
  record(us - 900000, "NVRM: Xid (PCI:0000:00:06): 13, pid=1, name=other, not ours");
  record(us - 800000, "NVRM: loading NVIDIA UNIX Open Kernel Module");
  record(us - 700000, "nvgpu: 17000000.ga10b gv11b_fb_handle_mmu_fault_common [ERR] mmu fault");
  auto lines = recent_gpu_errors(std::chrono::seconds(30), getpid(), 4, path_);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("ENGINE CE3"), std::string::npos);
  EXPECT_NE(lines[1].find("nvgpu"), std::string::npos);
  EXPECT_EQ(recent_gpu_errors(std::chrono::seconds(30), getpid(), 1, path_).size(), 1u);
  EXPECT_TRUE(recent_gpu_errors(std::chrono::seconds(30), getpid(), 4, "/nonexistent").empty());
}

}  // namespace
}  // namespace nvhcq::drv
