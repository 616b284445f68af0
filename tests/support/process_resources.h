#pragma once
// What this process holds, for leak checks: open file descriptors
// (/proc/self/fd), memory mappings (/proc/self/maps), resident and virtual
// memory (VmRSS, VmSize of /proc/self/status).

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvhcq::testing {

struct ProcessResources {
  size_t fds = 0;
  size_t maps = 0;
  uint64_t rss_kib = 0;
  uint64_t vm_kib = 0;

  static ProcessResources now();
  // "fds 12, maps 341, RSS 80.1 MiB, VM 1.2 GiB"
  std::string text() const;
  // "fds 12 -> 12 (+0), maps 341 -> 343 (+2), RSS ..."
  static std::string change(const ProcessResources& before, const ProcessResources& after);
};

}  // namespace nvhcq::testing
