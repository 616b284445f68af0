#include "cpu/cpu_info.h"

#include <sched.h>
#include <sys/utsname.h>

#include <fstream>
#include <string>
#include <thread>

namespace nvhcq::cpu {
namespace {

CpuInfo detect() {
  CpuInfo info;
  utsname u{};
  if (uname(&u) == 0) info.arch = u.machine;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    info.logical_cores = CPU_COUNT(&set);
  } else {
    info.logical_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&] {
      auto pos = line.find(':');
      return pos == std::string::npos ? std::string() : line.substr(pos + 2);
    };
    if (info.model.empty() && (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0)) {
      info.model = value();
    }
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  info.avx2 = __builtin_cpu_supports("avx2");
  info.fma = __builtin_cpu_supports("fma");
  info.avx512f = __builtin_cpu_supports("avx512f");
  unsigned a, b, c, d;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  info.f16c = (c >> 29) & 1u;
#elif defined(__aarch64__)
  info.neon = true;
#endif
  if (info.model.empty()) info.model = "unknown";
  return info;
}

}  // namespace

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect();
  return info;
}

}  // namespace nvhcq::cpu
