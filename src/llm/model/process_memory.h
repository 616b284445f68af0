#pragma once
// The process's resident memory, from /proc/self/status (Linux). `nvhcq run
// --verbose` compares it with the model file and the KV cache: weights used in
// place from the file's mapping count once (as file pages), never twice.

#include <cstdint>
#include <optional>

namespace nvhcq::llm {

struct ProcessMemory {
  uint64_t rss = 0;       // VmRSS: everything resident
  uint64_t rss_anon = 0;  // RssAnon: heap, stacks, anonymous mappings
  uint64_t rss_file = 0;  // RssFile: file-backed pages (the model's mapping, the binary)
};

// nullopt where /proc/self/status is unreadable (not Linux).
std::optional<ProcessMemory> read_process_memory();

}  // namespace nvhcq::llm
