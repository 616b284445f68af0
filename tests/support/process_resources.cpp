#include "support/process_resources.h"

#include <dirent.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace nvhcq::testing {
namespace {

uint64_t status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1));
  }
  return 0;
}

std::string mib(uint64_t kib) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f MiB", static_cast<double>(kib) / 1024.0);
  return b;
}

std::string signed_diff(long long d) {
  char b[32];
  std::snprintf(b, sizeof(b), "%+lld", d);
  return b;
}

}  // namespace

ProcessResources ProcessResources::now() {
  ProcessResources r;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ++r.fds;
    }
    ::closedir(d);
    if (r.fds > 0) --r.fds;  // the descriptor opendir itself holds
  }
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) ++r.maps;
  r.rss_kib = status_kib("VmRSS");
  r.vm_kib = status_kib("VmSize");
  return r;
}

std::string ProcessResources::text() const {
  return "fds " + std::to_string(fds) + ", maps " + std::to_string(maps) + ", RSS " + mib(rss_kib) +
         ", VM " + mib(vm_kib);
}

std::string ProcessResources::change(const ProcessResources& a, const ProcessResources& b) {
  auto d = [](uint64_t x, uint64_t y) {
    return static_cast<long long>(y) - static_cast<long long>(x);
  };
  return "fds " + std::to_string(a.fds) + " -> " + std::to_string(b.fds) + " (" +
         signed_diff(d(a.fds, b.fds)) + "), maps " + std::to_string(a.maps) + " -> " +
         std::to_string(b.maps) + " (" + signed_diff(d(a.maps, b.maps)) + "), RSS " +
         mib(a.rss_kib) + " -> " + mib(b.rss_kib) + " (" +
         signed_diff(d(a.rss_kib, b.rss_kib) / 1024) + " MiB), VM " + mib(a.vm_kib) + " -> " +
         mib(b.vm_kib) + " (" + signed_diff(d(a.vm_kib, b.vm_kib) / 1024) + " MiB)";
}

}  // namespace nvhcq::testing
