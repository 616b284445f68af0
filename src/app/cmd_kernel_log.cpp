// nvhcq kernel-log: the GPU drivers' messages in the kernel log, classified (RM
// Xid codes with their meaning, MMU faults, nvgpu errors) as error, warning,
// known-harmless or info; live with --follow, or from a saved dmesg file.

#include <csignal>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "app/commands.h"
#include "base/args.h"
#include "base/error.h"
#include "drv/kernel_log.h"
#include "drv/kernel_log_reader.h"

namespace nvhcq::app {
namespace {

// Exit status when error lines were seen, distinct from 1 (nvhcq failed) and 2 (usage).
constexpr int kErrorsFound = 3;

// --follow ends on SIGINT or SIGTERM with the summary printed.
volatile std::sig_atomic_t g_stop = 0;
void request_stop(int) {
  g_stop = 1;
}

struct Printer {
  bool all = false;
  drv::KernelLogSummary summary;

  void print(const drv::KernelLogLine& l) {
    drv::LogVerdict v = drv::classify_kernel_log_line(l.text);
    add_to_summary(summary, v);
    if (v.severity == drv::LogSeverity::kUnrelated && !all) return;
    char stamp[32] = "";
    if (l.usec != 0) {
      std::snprintf(stamp, sizeof(stamp), "[%5llu.%06llu] ",
                    static_cast<unsigned long long>(l.usec / 1000000),
                    static_cast<unsigned long long>(l.usec % 1000000));
    }
    std::string tag =
        v.severity == drv::LogSeverity::kUnrelated ? "" : drv::severity_name(v.severity);
    std::printf("%s%-15s %s\n", stamp, tag.c_str(), l.text.c_str());
    if (v.severity == drv::LogSeverity::kError || v.severity == drv::LogSeverity::kWarning ||
        v.severity == drv::LogSeverity::kHarmless) {
      std::string who;
      if (v.pid >= 0)
        who = " [pid " + std::to_string(v.pid) + (v.process.empty() ? "" : " " + v.process) + "]";
      std::printf("%*s  = %s%s\n", static_cast<int>(std::string(stamp).size()) + 15, "",
                  v.reason.c_str(), who.c_str());
    }
    std::fflush(stdout);
  }
};

int classify_file(const std::string& path, Printer& p) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file)
      throw Error("cannot open " + path, "open", 0, "give a saved dmesg output, or '-' for stdin");
    in = &file;
  }
  std::string line;
  while (std::getline(*in, line)) {
    if (line.empty() || line.front() == ' ') continue;  // /dev/kmsg " KEY=value" lines
    drv::KernelLogLine l;
    if (!drv::parse_kmsg_record(line, &l)) l = drv::parse_dmesg_line(line);
    p.print(l);
  }
  return 0;
}

}  // namespace

int run_kernel_log(const Args& args) {
  ArgParser parser(
      "nvhcq kernel-log",
      "Print the GPU drivers' messages of the kernel log, each classified as error,\n"
      "warning, known-harmless or info (RM Xid codes with their meaning and the process\n"
      "they name; MMU faults; nvgpu SM, MMU, PBDMA and copy-engine errors), then a\n"
      "summary. Without options: what the log holds now (since boot, as far as the\n"
      "kernel's buffer reaches). Exit status 3 when error lines were seen; an unreadable\n"
      "log is a notice, not a failure.");
  parser.flag("follow", "print messages as they are logged, from now on, until interrupted", 'f')
      .flag("since-boot", "with --follow: first print what the log already holds")
      .flag("all", "also print messages that are not from a GPU driver")
      .option("input", "FILE",
              "classify a saved log (dmesg output or /dev/kmsg records; '-': stdin)")
      .option("seconds", "N", "with --follow: stop after N seconds (0: never)", "0");
  const auto r = parser.parse(args);
  if (r.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  Printer p;
  p.all = r.flag("all");
  const bool follow = r.flag("follow");
  const long long seconds = r.get_int("seconds");
  if (seconds < 0) throw UsageError("--seconds must be 0 or more");
  if (r.has("input")) {
    if (follow) throw UsageError("--follow reads the live log; it cannot be combined with --input");
    classify_file(r.get("input"), p);
  } else {
    const bool from_boot = !follow || r.flag("since-boot");
    drv::KernelLogReader reader(from_boot ? drv::KernelLogReader::Start::kBoot
                                          : drv::KernelLogReader::Start::kNow);
    if (!reader.available()) {
      std::fprintf(stderr, "nvhcq kernel-log: %s\n", reader.notice().c_str());
      return 0;
    }
    for (const auto& l : reader.read_new()) p.print(l);
    if (follow) {
      std::fprintf(
          stderr, "nvhcq kernel-log: following %s%s\n", reader.source().c_str(),
          seconds > 0 ? (" for " + std::to_string(seconds) + " s").c_str() : " (Ctrl-C stops)");
      std::signal(SIGINT, request_stop);
      std::signal(SIGTERM, request_stop);
      auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
      while (!g_stop && (seconds == 0 || std::chrono::steady_clock::now() < end)) {
        for (const auto& l : reader.wait_new(std::chrono::milliseconds(500))) p.print(l);
      }
    }
    if (reader.lost() > 0) {
      std::printf("(%llu records were overwritten before they could be read)\n",
                  static_cast<unsigned long long>(reader.lost()));
    }
  }
  std::printf("GPU messages: %s\n", p.summary.text().c_str());
  return p.summary.errors > 0 ? kErrorsFound : 0;
}

}  // namespace nvhcq::app
