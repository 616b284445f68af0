#include "llm/model/process_memory.h"

#include <cstdio>
#include <cstring>

namespace nvhcq::llm {

std::optional<ProcessMemory> read_process_memory() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return std::nullopt;
  ProcessMemory m;
  bool found = false;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long kib = 0;
    if (std::sscanf(line, "VmRSS: %llu kB", &kib) == 1) {
      m.rss = kib * 1024;
      found = true;
    } else if (std::sscanf(line, "RssAnon: %llu kB", &kib) == 1) {
      m.rss_anon = kib * 1024;
    } else if (std::sscanf(line, "RssFile: %llu kB", &kib) == 1) {
      m.rss_file = kib * 1024;
    }
  }
  std::fclose(f);
  if (!found) return std::nullopt;
  return m;
}

}  // namespace nvhcq::llm
