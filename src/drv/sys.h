#pragma once
// The syscall seam. Every driver call nvhcq makes (open, ioctl, mmap, munmap,
// close, and reads of /proc and /sys files) goes through drv::sys(), so tests
// can install a simulated kernel (tests/sim/) underneath the real driver code.
// The calls keep POSIX conventions: -1 (or MAP_FAILED) with errno set on failure.

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace nvhcq::drv {

class Sys {
 public:
  virtual ~Sys() = default;
  virtual int open(const char* path, int flags) = 0;
  virtual int close(int fd) = 0;
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
  virtual void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) = 0;
  virtual int munmap(void* addr, size_t length) = 0;
  // Reads a whole (small) file such as /proc/driver/nvidia/version; false if unreadable.
  virtual bool read_file(const std::string& path, std::string* out) = 0;
  // True when the path names an existing file or device node.
  virtual bool exists(const std::string& path) = 0;
  // Names in a directory (not "." or ".."); empty if it does not exist.
  virtual std::vector<std::string> list_dir(const std::string& path) = 0;
};

// The kernel of this machine.
Sys& real_sys();
// The seam in use: real_sys() unless a test installed another.
Sys& sys();

// Installs `replacement` as drv::sys() for its lifetime (tests only; not re-entrant
// across threads that are already inside driver calls).
class ScopedSys {
 public:
  explicit ScopedSys(Sys* replacement);
  ~ScopedSys();
  ScopedSys(const ScopedSys&) = delete;
  ScopedSys& operator=(const ScopedSys&) = delete;

 private:
  Sys* previous_;
};

// A file descriptor closed through the seam when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Opens `path` through the seam; throws Error naming the path and errno on failure.
Fd open_or_throw(const std::string& path, int flags);

}  // namespace nvhcq::drv
