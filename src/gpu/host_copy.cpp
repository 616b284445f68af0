#include "gpu/host_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace nvhcq::gpu {

void host_copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;  // memcpy wants valid pointers even for nothing
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = std::min(kCopyThreads, cores);
  if (bytes < kParallelCopyMin || threads < 2) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Pieces on 4 KiB boundaries, so no two threads write one page.
  const size_t piece = (bytes / threads + 4095) / 4096 * 4096;
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  std::vector<std::thread> helpers;
  for (size_t start = piece; start < bytes; start += piece) {
    const size_t n = std::min(piece, bytes - start);
    helpers.emplace_back([=] { std::memcpy(out + start, in + start, n); });
  }
  std::memcpy(out, in, std::min(piece, bytes));
  for (auto& t : helpers) t.join();
}

}  // namespace nvhcq::gpu
