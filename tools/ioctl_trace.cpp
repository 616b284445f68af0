// LD_PRELOAD tracer of the ioctls a process makes to nvidia.ko and nvidia-uvm:
// the RM escapes with their class / control ids and parameter bytes. A debugging
// aid for the direct path: run it under libcuda and under nvhcq and compare.
//   LD_PRELOAD=build/tools/libnvhcq_ioctl_trace.so NVHCQ_TRACE_FILE=trace.txt <program>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

std::FILE* out() {
  static std::FILE* f = [] {
    const char* path = std::getenv("NVHCQ_TRACE_FILE");
    std::FILE* file = path != nullptr ? std::fopen(path, "w") : nullptr;
    return file != nullptr ? file : stderr;
  }();
  return f;
}

std::mutex& lock() {
  static std::mutex m;
  return m;
}

void hex(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) std::fprintf(out(), "%s%02x", (i % 4 == 0 && i) ? " " : "", b[i]);
}

std::string fd_path(int fd) {
  char link[64], target[256] = {0};
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  return n > 0 ? std::string(target, n) : std::string("?");
}

void describe(int fd, unsigned long request, void* arg, int rc, bool before) {
  std::string path = fd_path(fd);
  bool nvidia = path.rfind("/dev/nvidia", 0) == 0;
  if (!nvidia) return;
  std::lock_guard<std::mutex> g(lock());
  bool uvm = path == "/dev/nvidia-uvm";
  unsigned nr = request & 0xff, size = (request >> 16) & 0x3fff;
  if (before) return;
  std::fprintf(out(), "%s rc=%d ", path.c_str(), rc);
  if (uvm) {
    std::fprintf(out(), "UVM cmd=%lu ", request);
    hex(arg, 48);
    std::fprintf(out(), "\n");
    return;
  }
  auto* w = static_cast<uint32_t*>(arg);
  switch (nr) {
    case 0x2b: {  // NV_ESC_RM_ALLOC (NVOS21/NVOS64)
      uint64_t params;
      std::memcpy(&params, w + 4, 8);
      uint32_t psize = size == 32 ? w[6] : w[8];
      std::fprintf(out(), "RM_ALLOC parent=%08x new=%08x class=%04x status=%x params(%u)=", w[1], w[2],
                   w[3], size == 32 ? w[7] : w[10], psize);
      if (params != 0 && psize != 0) hex(reinterpret_cast<void*>(params), psize < 512 ? psize : 512);
      break;
    }
    case 0x2a: {  // NV_ESC_RM_CONTROL (NVOS54)
      uint64_t params;
      std::memcpy(&params, w + 4, 8);
      std::fprintf(out(), "RM_CONTROL obj=%08x cmd=%08x status=%x params(%u)=", w[1], w[2], w[7], w[6]);
      if (params != 0 && w[6] != 0) hex(reinterpret_cast<void*>(params), w[6] < 256 ? w[6] : 256);
      break;
    }
    case 0x29: std::fprintf(out(), "RM_FREE parent=%08x old=%08x status=%x", w[1], w[2], w[3]); break;
    default:
      std::fprintf(out(), "escape nr=0x%x size=%u data=", nr, size);
      hex(arg, size < 128 ? size : 128);
  }
  std::fprintf(out(), "\n");
  std::fflush(out());
}

}  // namespace

extern "C" int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  using Fn = int (*)(int, unsigned long, void*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "ioctl"));
  int rc = real(fd, request, arg);
  describe(fd, request, arg, rc, false);
  return rc;
}
