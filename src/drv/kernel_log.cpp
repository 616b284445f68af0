#include "drv/kernel_log.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace nvhcq::drv {
namespace {

// Xid codes (NVIDIA's Xid catalog; the meanings are its descriptions, shortened).
// Severity: what a test seeing it should conclude. 63 and 92 record a memory
// event the driver handled; 154 announces what recovery a later error needs.
struct XidInfo {
  int code;
  const char* meaning;
  LogSeverity severity;
  GpuFaultKind kind;
};
constexpr LogSeverity E = LogSeverity::kError, W = LogSeverity::kWarning;
const XidInfo kXids[] = {
    {8, "GPU stopped processing (channel idle timeout)", E, GpuFaultKind::kTimeout},
    {11, "invalid or corrupted pushbuffer stream", E, GpuFaultKind::kPushbuffer},
    {13, "graphics engine exception (illegal instruction, bad address, out-of-range access)", E,
     GpuFaultKind::kGraphics},
    {31, "MMU fault (a GPU access to an unmapped or protected virtual address)", E,
     GpuFaultKind::kMmu},
    {32, "invalid or corrupted pushbuffer stream (PBDMA error)", E, GpuFaultKind::kPushbuffer},
    {43, "GPU stopped processing: channel reset after an error", E, GpuFaultKind::kChannel},
    {44, "graphics engine fault during context switch", E, GpuFaultKind::kGraphics},
    {45, "preemptive cleanup of a channel after an earlier error", E, GpuFaultKind::kChannel},
    {48, "double-bit ECC error (uncorrectable memory error)", E, GpuFaultKind::kMemory},
    {61, "internal micro-controller breakpoint or warning", W, GpuFaultKind::kFirmware},
    {62, "internal micro-controller halt", E, GpuFaultKind::kFirmware},
    {63, "ECC page retirement or row remapping recorded", W, GpuFaultKind::kMemory},
    {64, "ECC page retirement or row remapping recording failed", E, GpuFaultKind::kMemory},
    {68, "video decoder (NVDEC) exception", E, GpuFaultKind::kOther},
    {69, "graphics engine class error (a method the class does not have)", E,
     GpuFaultKind::kGraphics},
    {74, "NVLink error", E, GpuFaultKind::kBus},
    {79, "GPU has fallen off the bus", E, GpuFaultKind::kBus},
    {92, "high single-bit ECC error rate", W, GpuFaultKind::kMemory},
    {94, "contained ECC error (the affected application was stopped)", E, GpuFaultKind::kMemory},
    {95, "uncontained ECC error (a GPU reset is needed)", E, GpuFaultKind::kMemory},
    {109, "context switch timeout", E, GpuFaultKind::kTimeout},
    {110, "security fault", E, GpuFaultKind::kOther},
    {119, "GSP RPC timeout (the GPU System Processor did not answer)", E, GpuFaultKind::kFirmware},
    {120, "GSP error (the GPU System Processor reported an error)", E, GpuFaultKind::kFirmware},
    {121, "C2C link error", E, GpuFaultKind::kBus},
    {140, "unrecovered ECC error", E, GpuFaultKind::kMemory},
    {143, "GPU initialization failure", E, GpuFaultKind::kOther},
    {154, "GPU recovery action changed", W, GpuFaultKind::kOther},
};

const XidInfo* find_xid(int code) {
  for (const auto& x : kXids) {
    if (x.code == code) return &x;
  }
  return nullptr;
}

// Messages that look alarming and are known to be expected.
struct Harmless {
  const char* needle;
  const char* why;
};
const Harmless kHarmless[] = {
    {"FBHUB Interrupt detected. Clearing it", "FBHUB poison interrupt cleared at driver load"},
    {"Persistence mode is deprecated", "nvidia-smi persistence-mode deprecation notice"},
    {"loading out-of-tree module taints kernel", "out-of-tree module notice"},
    {"module verification failed", "unsigned module notice"},
    {"tu104_gr_init_commit_rtv_cb", "RTV buffer not present on ga10b (every GR context init)"},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> needles) {
  for (auto n : needles) {
    if (contains(s, n)) return true;
  }
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Drops "<4>" and "[   12.345678]" prefixes (either or both, in that order).
std::string_view strip_prefixes(std::string_view s, int* priority, uint64_t* usec) {
  s = trim(s);
  if (s.size() >= 3 && s[0] == '<') {
    size_t close = s.find('>');
    if (close != std::string_view::npos && close > 1 && close <= 4) {
      bool digits = std::all_of(s.begin() + 1, s.begin() + static_cast<long>(close),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      if (digits) {
        if (priority != nullptr)
          *priority = std::atoi(std::string(s.substr(1, close - 1)).c_str()) & 7;
        s = trim(s.substr(close + 1));
      }
    }
  }
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close != std::string_view::npos) {
      std::string stamp(trim(s.substr(1, close - 1)));
      char* end = nullptr;
      double seconds = std::strtod(stamp.c_str(), &end);
      if (end != stamp.c_str() && *end == '\0') {
        if (usec != nullptr) *usec = static_cast<uint64_t>(seconds * 1e6 + 0.5);
        s = trim(s.substr(close + 1));
      }
    }
  }
  return s;
}

// "pid=405" or "pid='<unknown>'" anywhere in the line; "name=test_gpu," likewise.
void parse_process(std::string_view s, LogVerdict& v) {
  size_t p = s.find("pid=");
  if (p != std::string_view::npos) {
    size_t i = p + 4;
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i && j - i < 10) v.pid = std::atoi(std::string(s.substr(i, j - i)).c_str());
  }
  size_t n = s.find("name=");
  if (n != std::string_view::npos) {
    size_t i = n + 5, j = i;
    while (j < s.size() && s[j] != ',' && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    std::string name(s.substr(i, j - i));
    if (name != "<unknown>" && name != "'<unknown>'" && name != "N/A" && name != "'N/A'") {
      v.process = name;
    }
  }
}

std::string source_of(std::string_view t, const std::string& low) {
  if (starts_with(t, "NVRM:")) return "NVRM";
  if (starts_with(t, "nvidia-uvm")) return "nvidia-uvm";
  if (starts_with(t, "nvidia-modeset") || starts_with(t, "nvidia-nvlink") ||
      starts_with(t, "nvidia-drm") || starts_with(t, "nvidia-peermem") ||
      starts_with(t, "nvidia:") || starts_with(t, "nvidia ")) {
    return "nvidia";
  }
  if (contains(low, "nvgpu")) return "nvgpu";
  // The SM error-state lines nvgpu prints after "sm machine check err" carry no prefix.
  if (starts_with(low, "hww_")) return "nvgpu";
  if (contains(low, "nvmap")) return "nvmap";
  if (contains_any(low, {"ga10b", "gk20a", "gv11b", "gp10b"})) return "nvgpu";
  return "";
}

// The fault kind named by a message's words (nvgpu lines and non-Xid RM lines).
GpuFaultKind kind_from_words(const std::string& low) {
  if (contains_any(low, {"mmu fault", "mmu_fault", "mmu_err", "mmu error", "fault is of type"}))
    return GpuFaultKind::kMmu;
  if (contains(low, "pbdma")) return GpuFaultKind::kPushbuffer;
  if (contains_any(low, {"ce not idle", "copy engine", "ce_isr", "_ce_", " ce "}))
    return GpuFaultKind::kCopyEngine;
  if (contains_any(low, {"sked", "sm machine check", "hww_", "sm exception", "gr exception",
                         "gr_exception", "esr", "illegal"}))
    return GpuFaultKind::kGraphics;
  if (contains_any(low, {"fallen off the bus", "link down"})) return GpuFaultKind::kBus;
  if (contains_any(low, {"ecc", "uncorrectable", "double bit", "row remap"}))
    return GpuFaultKind::kMemory;
  if (contains(low, "gsp")) return GpuFaultKind::kFirmware;
  if (contains_any(low, {"timeout", "timed out", "watchdog", "locked"}))
    return GpuFaultKind::kTimeout;
  return GpuFaultKind::kOther;
}

}  // namespace

const char* severity_name(LogSeverity s) {
  switch (s) {
    case LogSeverity::kError:
      return "error";
    case LogSeverity::kWarning:
      return "warning";
    case LogSeverity::kHarmless:
      return "known-harmless";
    case LogSeverity::kInfo:
      return "info";
    case LogSeverity::kUnrelated:
      return "unrelated";
  }
  return "?";
}

const char* fault_kind_name(GpuFaultKind k) {
  switch (k) {
    case GpuFaultKind::kNone:
      return "none";
    case GpuFaultKind::kMmu:
      return "MMU fault";
    case GpuFaultKind::kGraphics:
      return "graphics/SM exception";
    case GpuFaultKind::kPushbuffer:
      return "pushbuffer/PBDMA error";
    case GpuFaultKind::kCopyEngine:
      return "copy-engine error";
    case GpuFaultKind::kChannel:
      return "channel reset";
    case GpuFaultKind::kTimeout:
      return "timeout";
    case GpuFaultKind::kMemory:
      return "memory (ECC) error";
    case GpuFaultKind::kBus:
      return "bus/link error";
    case GpuFaultKind::kFirmware:
      return "firmware (GSP) error";
    case GpuFaultKind::kOther:
      return "other";
  }
  return "?";
}

std::string xid_meaning(int code) {
  const XidInfo* x = find_xid(code);
  return x != nullptr ? x->meaning : "unlisted Xid (see NVIDIA's Xid catalog)";
}

LogSeverity xid_severity(int code) {
  const XidInfo* x = find_xid(code);
  return x != nullptr ? x->severity : LogSeverity::kError;
}

GpuFaultKind xid_fault_kind(int code) {
  const XidInfo* x = find_xid(code);
  return x != nullptr ? x->kind : GpuFaultKind::kOther;
}

LogVerdict classify_kernel_log_line(std::string_view text) {
  LogVerdict v;
  std::string_view t = strip_prefixes(text, nullptr, nullptr);
  const std::string low = lower(t);
  v.source = source_of(t, low);
  if (v.source.empty()) {
    v.reason = "not a GPU driver message";
    return v;
  }
  parse_process(t, v);
  for (const auto& h : kHarmless) {
    if (contains(t, h.needle)) {
      v.severity = LogSeverity::kHarmless;
      v.reason = std::string("known harmless: ") + h.why;
      return v;
    }
  }

  // "NVRM: Xid (PCI:0000:00:06): 31, pid=405, ..." (older drivers: "Xid (0000:03:00): 14, ...").
  size_t x = t.find("Xid (");
  if (v.source == "NVRM" && x != std::string_view::npos) {
    size_t close = t.find(')', x);
    size_t colon = close == std::string_view::npos ? close : t.find(':', close);
    if (colon != std::string_view::npos) {
      std::string_view bus = t.substr(x + 5, close - x - 5);
      if (starts_with(bus, "PCI:")) bus.remove_prefix(4);
      v.bus_id = std::string(bus);
      std::string_view rest = trim(t.substr(colon + 1));
      size_t digits = 0;
      while (digits < rest.size() && digits < 6 &&
             std::isdigit(static_cast<unsigned char>(rest[digits]))) {
        ++digits;
      }
      if (digits > 0) {
        v.xid = std::atoi(std::string(rest.substr(0, digits)).c_str());
        v.severity = xid_severity(v.xid);
        v.kind = xid_fault_kind(v.xid);
        v.reason = "Xid " + std::to_string(v.xid) + ": " + xid_meaning(v.xid);
        return v;
      }
    }
  }

  // nvgpu tags its messages [ERR], [WRN], [INFO]; the error words below also
  // catch the untagged SM error-state lines.
  const bool error_words = contains_any(low, {"mmu fault",
                                              "mmu_fault",
                                              "mmu_err",
                                              "fault is of type",
                                              "sked",
                                              "sm machine check",
                                              "hww_global_esr",
                                              "hww_warp_esr",
                                              "pbdma intr",
                                              "pbdma interrupt",
                                              "pbdma error",
                                              "ce not idle",
                                              "gr exception",
                                              "gr_exception",
                                              "sm exception",
                                              "ctxsw timeout",
                                              "fallen off the bus",
                                              "uncorrectable",
                                              "double bit ecc",
                                              "rminitadapter failed",
                                              "rm_init_adapter failed",
                                              "rc watchdog",
                                              "heartbeat timed out",
                                              "robust channel"});
  if (error_words || contains(t, "[ERR]")) {
    v.severity = LogSeverity::kError;
    v.kind = kind_from_words(low);
    v.reason = std::string(v.source) + " reports a " + fault_kind_name(v.kind);
    return v;
  }
  if (contains(t, "[WRN]") ||
      contains_any(low,
                   {"warn", "assert", "timeout", "timed out", "failed", "error", "deprecated"}) ||
      (v.source == "nvmap" && contains(low, "tag"))) {
    v.severity = LogSeverity::kWarning;
    v.reason = v.source + " warning";
    return v;
  }
  v.severity = LogSeverity::kInfo;
  v.reason = v.source + " message";
  return v;
}

bool parse_kmsg_record(std::string_view record, KernelLogLine* out) {
  size_t semi = record.find(';');
  if (semi == std::string_view::npos) return false;
  std::string head(record.substr(0, semi));
  KernelLogLine l;
  char* p = head.data();
  char* end = nullptr;
  long prio = std::strtol(p, &end, 10);
  if (end == p || *end != ',') return false;
  p = end + 1;
  unsigned long long seq = std::strtoull(p, &end, 10);
  if (end == p || *end != ',') return false;
  p = end + 1;
  unsigned long long usec = std::strtoull(p, &end, 10);
  if (end == p || (*end != ',' && *end != '\0')) return false;
  l.priority = static_cast<int>(prio & 7);  // the facility sits in the upper bits
  l.seq = seq;
  l.usec = usec;
  std::string_view text = record.substr(semi + 1);
  size_t nl = text.find('\n');  // " KEY=value" continuation lines follow
  if (nl != std::string_view::npos) text = text.substr(0, nl);
  l.text = std::string(text);
  *out = std::move(l);
  return true;
}

KernelLogLine parse_dmesg_line(std::string_view line) {
  KernelLogLine l;
  std::string_view t = strip_prefixes(line, &l.priority, &l.usec);
  l.text = std::string(t);
  return l;
}

std::string KernelLogSummary::text() const {
  std::string s = std::to_string(errors) + (errors == 1 ? " error" : " errors");
  if (!xids.empty()) {
    s += " (Xid";
    for (size_t i = 0; i < xids.size(); ++i) s += (i ? ", " : " ") + std::to_string(xids[i]);
    s += ")";
  }
  s += ", " + std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings");
  s += ", " + std::to_string(harmless) + " known-harmless";
  s += ", " + std::to_string(info) + " info";
  return s;
}

void add_to_summary(KernelLogSummary& s, const LogVerdict& v) {
  switch (v.severity) {
    case LogSeverity::kError:
      ++s.errors;
      break;
    case LogSeverity::kWarning:
      ++s.warnings;
      break;
    case LogSeverity::kHarmless:
      ++s.harmless;
      break;
    case LogSeverity::kInfo:
      ++s.info;
      break;
    case LogSeverity::kUnrelated:
      return;
  }
  if (v.xid >= 0 && std::find(s.xids.begin(), s.xids.end(), v.xid) == s.xids.end()) {
    s.xids.push_back(v.xid);
  }
}

}  // namespace nvhcq::drv
