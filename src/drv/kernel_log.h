#pragma once
// What the GPU drivers write to the kernel log, classified. RM (nvidia.ko) reports
// channel and hardware errors as "NVRM: Xid (PCI:<bus id>): <code>, ..." lines;
// nvgpu (Jetson) prints "nvgpu: ..." lines and SM error-state lines. Each message
// is sorted into error, warning, known-harmless or info, with the Xid code and
// its meaning, the fault kind, and the process the driver names (pid=, name=),
// so a test can tell its own faults from another process's.
//
// The reading side (/dev/kmsg, or the syslog buffer) is drv/kernel_log_reader.h.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nvhcq::drv {

enum class LogSeverity {
  kError,      // the GPU or driver reported a fault: a test that caused it fails
  kWarning,    // worth a look (an assertion in the driver, a missing nvmap tag)
  kHarmless,   // looks alarming, is known to be expected (boot-time interrupt clears, ...)
  kInfo,       // other GPU driver messages
  kUnrelated,  // not from a GPU driver
};
const char* severity_name(LogSeverity severity);

// What failed, across both drivers (an RM Xid code maps to one of these; nvgpu
// messages are sorted by their words).
enum class GpuFaultKind {
  kNone,
  kMmu,         // bad GPU virtual address (Xid 31; nvgpu MMU fault)
  kGraphics,    // SM / graphics-engine exception, bad method or class (Xid 13, 69; nvgpu sked, SM)
  kPushbuffer,  // corrupt pushbuffer or GPFIFO entry (Xid 32; nvgpu PBDMA)
  kCopyEngine,  // copy-engine error (nvgpu CE)
  kChannel,     // a channel stopped or was torn down after an error (Xid 43, 45)
  kTimeout,     // the GPU stopped making progress (Xid 8, 109)
  kMemory,      // ECC, row remapping, page retirement (Xid 48, 63, 64, 92, 94, 95)
  kBus,         // the GPU fell off the bus or lost the link (Xid 79)
  kFirmware,    // GSP or other microcontroller (Xid 119, 120, 62)
  kOther,
};
const char* fault_kind_name(GpuFaultKind kind);

// One message as read from the log.
struct KernelLogLine {
  uint64_t seq = 0;   // /dev/kmsg sequence number (0 when unknown)
  uint64_t usec = 0;  // microseconds since boot (0 when unknown)
  int priority = -1;  // syslog level 0 (emerg) .. 7 (debug); -1 when unknown
  std::string text;   // the message, without prefixes
};

struct LogVerdict {
  LogSeverity severity = LogSeverity::kUnrelated;
  GpuFaultKind kind = GpuFaultKind::kNone;
  std::string source;   // "NVRM", "nvidia-uvm", "nvidia", "nvgpu", "nvmap" or ""
  int xid = -1;         // RM Xid code, -1 when the line is not an Xid
  std::string bus_id;   // "0000:00:06" for an Xid line
  int pid = -1;         // the process the driver blames (pid=N), -1 when none or unknown
  std::string process;  // its name (name=...), when given
  std::string reason;   // why this severity, in a few words
};

// Classifies one message (a /dev/kmsg text, or a dmesg line with or without its
// "[   12.345678]" / "<4>" prefixes).
LogVerdict classify_kernel_log_line(std::string_view text);

// The meaning of an RM Xid code ("MMU fault (bad GPU virtual address)"), or
// "unlisted Xid" for codes this table does not know.
std::string xid_meaning(int code);
// Severity and fault kind of an Xid code (unknown codes: error, kOther).
LogSeverity xid_severity(int code);
GpuFaultKind xid_fault_kind(int code);

// Parses one /dev/kmsg record: "<prio>,<seq>,<usec>,<flags>[,...];<text>", with
// the record's " KEY=value" continuation lines ignored. Returns false for text
// that is not such a record.
bool parse_kmsg_record(std::string_view record, KernelLogLine* out);
// Parses one line of dmesg (or syslog buffer) output: "[  12.345678] text",
// "<4>[  12.345678] text", or plain text.
KernelLogLine parse_dmesg_line(std::string_view line);

// A summary of many lines: counts per severity and the Xid codes seen.
struct KernelLogSummary {
  size_t errors = 0, warnings = 0, harmless = 0, info = 0;
  std::vector<int> xids;     // in order of appearance, repeats removed
  std::string text() const;  // "2 errors (Xid 31, 43), 0 warnings, 1 known-harmless, 5 info"
};
void add_to_summary(KernelLogSummary& summary, const LogVerdict& verdict);

}  // namespace nvhcq::drv
