#include "drv/kernel_log_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

namespace nvhcq::drv {
namespace {

// syslog(2) actions (linux/syslog.h is not installed everywhere).
constexpr int kSyslogReadAll = 3;
constexpr int kSyslogSizeBuffer = 10;
// A /dev/kmsg record is at most 8 KiB (the kernel refuses smaller reads of one).
constexpr size_t kReadChunk = 16 * 1024;

std::string restrict_hint() {
  std::ifstream in("/proc/sys/kernel/dmesg_restrict");
  int v = -1;
  if (in >> v && v == 1) {
    return " (kernel.dmesg_restrict is 1: run as root or with CAP_SYSLOG, or set it to 0)";
  }
  return "";
}

}  // namespace

KernelLogReader::KernelLogReader(Start start) : KernelLogReader(start, Options()) {}

KernelLogReader::KernelLogReader(Start start, Options options) : options_(std::move(options)) {
  open_kmsg(start);
  if (mode_ == Mode::kNone && options_.syslog_fallback) open_syslog(start);
}

KernelLogReader::~KernelLogReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::string KernelLogReader::source() const {
  switch (mode_) {
    case Mode::kKmsg:
      return options_.kmsg_path;
    case Mode::kSyslog:
      return "syslog buffer";
    case Mode::kNone:
      break;
  }
  return "none";
}

void KernelLogReader::open_kmsg(Start start) {
  fd_ = ::open(options_.kmsg_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    notice_ = "kernel log not readable: " + options_.kmsg_path + ": " + std::strerror(errno);
    return;
  }
  struct stat st {};
  is_char_device_ = ::fstat(fd_, &st) == 0 && S_ISCHR(st.st_mode);
  // /dev/kmsg: SEEK_END moves past the newest record; a regular file: to its end.
  if (start == Start::kNow && ::lseek(fd_, 0, SEEK_END) < 0) {
    notice_ = "kernel log: cannot seek " + options_.kmsg_path + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return;
  }
  mode_ = Mode::kKmsg;
  notice_.clear();
}

std::vector<std::string> KernelLogReader::syslog_lines() {
  std::vector<std::string> lines;
  int size = ::klogctl(kSyslogSizeBuffer, nullptr, 0);
  if (size <= 0) return lines;
  std::string buf(static_cast<size_t>(size), '\0');
  int n = ::klogctl(kSyslogReadAll, buf.data(), size);
  if (n <= 0) return lines;
  buf.resize(static_cast<size_t>(n));
  size_t pos = 0;
  while (pos < buf.size()) {
    size_t nl = buf.find('\n', pos);
    if (nl == std::string::npos) nl = buf.size();
    if (nl > pos) lines.emplace_back(buf, pos, nl - pos);
    pos = nl + 1;
  }
  return lines;
}

void KernelLogReader::open_syslog(Start start) {
  // Reading the buffer needs the same permission as asking for its size.
  if (::klogctl(kSyslogSizeBuffer, nullptr, 0) < 0) {
    notice_ += std::string("; syslog buffer: ") + std::strerror(errno) + restrict_hint();
    return;
  }
  mode_ = Mode::kSyslog;
  notice_.clear();
  if (start == Start::kNow) {
    std::vector<std::string> lines = syslog_lines();
    if (!lines.empty()) last_syslog_line_ = lines.back();
  }
}

void KernelLogReader::take_lines(std::vector<KernelLogLine>& out) {
  size_t pos = 0;
  while (true) {
    size_t nl = pending_.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string_view line(pending_.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line.front() == ' ') continue;  // a record's " KEY=value" lines
    KernelLogLine l;
    if (!parse_kmsg_record(line, &l)) l = parse_dmesg_line(line);
    out.push_back(std::move(l));
  }
  pending_.erase(0, pos);
}

std::vector<KernelLogLine> KernelLogReader::read_new() {
  std::vector<KernelLogLine> out;
  if (mode_ == Mode::kSyslog) {
    std::vector<std::string> lines = syslog_lines();
    size_t first = 0;
    if (!last_syslog_line_.empty()) {
      // Continue after the newest line returned before (timestamps make lines unique);
      // if it has left the buffer, everything there is new.
      for (size_t i = lines.size(); i-- > 0;) {
        if (lines[i] == last_syslog_line_) {
          first = i + 1;
          break;
        }
      }
    }
    for (size_t i = first; i < lines.size(); ++i) out.push_back(parse_dmesg_line(lines[i]));
    if (!lines.empty()) last_syslog_line_ = lines.back();
    return out;
  }
  if (mode_ != Mode::kKmsg) return out;
  std::string chunk(kReadChunk, '\0');
  for (int rounds = 0; rounds < 1 << 20; ++rounds) {
    ssize_t n = ::read(fd_, chunk.data(), chunk.size());
    if (n > 0) {
      pending_.append(chunk.data(), static_cast<size_t>(n));
      // /dev/kmsg hands out whole records; make each one end its line.
      if (is_char_device_ && pending_.back() != '\n') pending_.push_back('\n');
      take_lines(out);
      continue;
    }
    if (n == 0) break;  // a regular file's end
    if (errno == EINTR) continue;
    if (errno == EPIPE) {  // records were overwritten before we read them
      ++lost_;
      continue;
    }
    if (errno != EAGAIN) notice_ = "kernel log read failed: " + std::string(std::strerror(errno));
    break;
  }
  return out;
}

std::vector<KernelLogLine> KernelLogReader::wait_new(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<KernelLogLine> lines = read_new();
    if (!lines.empty() || !available()) return lines;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return lines;
    if (mode_ == Mode::kKmsg && is_char_device_) {
      pollfd p{fd_, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(100)));
    }
  }
}

std::vector<std::string> recent_gpu_errors(std::chrono::milliseconds window, int pid,
                                           size_t max_lines, const std::string& kmsg_path) {
  std::vector<std::string> out;
  KernelLogReader::Options o;
  o.kmsg_path = kmsg_path;
  o.syslog_fallback = false;  // kmsg timestamps only: the syslog text's are not comparable
  KernelLogReader reader(KernelLogReader::Start::kBoot, o);
  if (!reader.available()) return out;
  // /dev/kmsg stamps records with the monotonic clock, in microseconds.
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t now_us = static_cast<uint64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  const uint64_t window_us = static_cast<uint64_t>(window.count()) * 1000;
  const uint64_t since = now_us > window_us ? now_us - window_us : 0;
  for (const KernelLogLine& l : reader.read_new()) {
    if (l.usec < since) continue;
    LogVerdict v = classify_kernel_log_line(l.text);
    if (v.severity != LogSeverity::kError || (v.pid >= 0 && v.pid != pid)) continue;
    out.push_back(l.text);
  }
  if (out.size() > max_lines) out.erase(out.begin(), out.end() - static_cast<long>(max_lines));
  return out;
}

}  // namespace nvhcq::drv
