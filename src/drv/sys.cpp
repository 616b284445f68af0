#include "drv/sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace nvhcq::drv {
namespace {

class RealSys final : public Sys {
 public:
  int open(const char* path, int flags) override { return ::open(path, flags | O_CLOEXEC); }
  int close(int fd) override { return ::close(fd); }
  int ioctl(int fd, unsigned long request, void* arg) override {
    int rc;
    do {
      rc = ::ioctl(fd, request, arg);
    } while (rc == -1 && (errno == EINTR || errno == EAGAIN));
    return rc;
  }
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
    return ::mmap(addr, length, prot, flags, fd, offset);
  }
  int munmap(void* addr, size_t length) override { return ::munmap(addr, length); }
  bool read_file(const std::string& path, std::string* out) override {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream text;
    text << in.rdbuf();
    *out = text.str();
    return true;
  }
  bool exists(const std::string& path) override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
  std::vector<std::string> list_dir(const std::string& path) override {
    std::vector<std::string> names;
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return names;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    return names;
  }
};

std::atomic<Sys*>& installed() {
  static std::atomic<Sys*> current{nullptr};
  return current;
}

}  // namespace

Sys& real_sys() {
  static RealSys instance;
  return instance;
}

Sys& sys() {
  Sys* s = installed().load(std::memory_order_acquire);
  return s != nullptr ? *s : real_sys();
}

ScopedSys::ScopedSys(Sys* replacement) : previous_(installed().exchange(replacement)) {}
ScopedSys::~ScopedSys() { installed().store(previous_); }

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) sys().close(fd_);
  fd_ = -1;
}

Fd open_or_throw(const std::string& path, int flags) {
  int fd = sys().open(path.c_str(), flags);
  if (fd < 0) {
    int err = errno;
    throw Error("cannot open " + path + ": " + std::string(strerror(err)), "open", err,
                err == EACCES ? "the user needs access to the GPU device nodes (video group)"
                              : std::string());
  }
  return Fd(fd);
}

}  // namespace nvhcq::drv
