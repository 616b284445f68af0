#pragma once
// Reads the kernel log as it grows: /dev/kmsg (non-blocking, one record per
// read, each with its sequence number), or, where /dev/kmsg cannot be opened,
// the syslog buffer dmesg reads (klogctl). Starts at the end of the log (only
// what is logged from now on) or at its beginning (everything since boot that
// the buffer still holds). An unreadable log is not an error: the reader says
// why in notice() and returns nothing.
//
// The kernel log is not a GPU driver node, so this reads it directly rather
// than through the drv::sys() seam (the simulated GPU of tests/sim/ has its
// own log).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "drv/kernel_log.h"

namespace nvhcq::drv {

class KernelLogReader {
 public:
  enum class Start { kNow, kBoot };
  struct Options {
    std::string kmsg_path = "/dev/kmsg";  // a regular file of records or dmesg lines also works
    bool syslog_fallback = true;          // read the syslog buffer when kmsg_path cannot be opened
  };

  explicit KernelLogReader(Start start = Start::kNow);
  KernelLogReader(Start start, Options options);
  ~KernelLogReader();
  KernelLogReader(const KernelLogReader&) = delete;
  KernelLogReader& operator=(const KernelLogReader&) = delete;

  bool available() const { return mode_ != Mode::kNone; }
  // Why the log cannot be read ("" when it can).
  const std::string& notice() const { return notice_; }
  // Where the lines come from: the kmsg path, or "syslog buffer".
  std::string source() const;

  // Messages logged since the previous call (or since the start), without waiting.
  std::vector<KernelLogLine> read_new();
  // Like read_new(), but waits up to `timeout` for at least one message.
  std::vector<KernelLogLine> wait_new(std::chrono::milliseconds timeout);
  // Records the kernel overwrote before they were read (the ring buffer wrapped).
  uint64_t lost() const { return lost_; }

 private:
  enum class Mode { kNone, kKmsg, kSyslog };
  void open_kmsg(Start start);
  void open_syslog(Start start);
  std::vector<std::string> syslog_lines();
  void take_lines(std::vector<KernelLogLine>& out);

  Options options_;
  Mode mode_ = Mode::kNone;
  int fd_ = -1;
  bool is_char_device_ = false;
  std::string notice_;
  std::string pending_;           // a partial line (regular files only)
  std::string last_syslog_line_;  // syslog mode: the newest line already returned
  uint64_t lost_ = 0;
};

// The GPU drivers' error lines of the last `window` (by the log's timestamps)
// that name process `pid` or no process, oldest first, at most `max_lines`: what
// the kernel log says about a fault just raised (RM's Xid line with the MMU
// fault's engine and type, nvgpu's SM and MMU error lines). Empty when the log
// cannot be read. (`kmsg_path`: a file of /dev/kmsg records, for tests.)
std::vector<std::string> recent_gpu_errors(std::chrono::milliseconds window, int pid,
                                           size_t max_lines = 4,
                                           const std::string& kmsg_path = "/dev/kmsg");

}  // namespace nvhcq::drv
