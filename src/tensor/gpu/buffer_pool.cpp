#include "tensor/gpu/buffer_pool.h"

#include "base/error.h"

namespace nvhcq::tensor {
namespace {

// Cached memory beyond this is freed rather than kept.
constexpr size_t kMaxCachedBytes = size_t{8} << 30;

}  // namespace

BufferPool::~BufferPool() {
  trim();
}

size_t BufferPool::size_class(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes <= 256) return 256;
  if (bytes <= kMiB) {
    size_t c = 256;
    while (c < bytes) c <<= 1;
    return c;
  }
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

std::unique_ptr<gpu::DeviceMemory> BufferPool::take(size_t bytes) {
  const size_t c = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(c);
    if (it != free_.end() && !it->second.empty()) {
      auto m = std::move(it->second.back());
      it->second.pop_back();
      cached_ -= c;
      return m;
    }
  }
  try {
    return acc_.alloc(c);
  } catch (const Error&) {
    if (cached_bytes() == 0) throw;
  }
  // Out of memory (or the driver refused): release the cache and try once more.
  acc_.synchronize();
  trim();
  return acc_.alloc(c);
}

void BufferPool::give_back(std::unique_ptr<gpu::DeviceMemory> memory) {
  if (!memory) return;
  const size_t c = memory->size();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + c <= kMaxCachedBytes) {
      cached_ += c;
      free_[c].push_back(std::move(memory));
      return;
    }
  }
  // The cache is full: free it, but only once queued kernels are done with it.
  try {
    acc_.synchronize();
  } catch (const std::exception&) {
    // The fault is reported by whoever waits next; the memory is freed anyway.
  }
  memory.reset();
}

void BufferPool::trim() {
  std::map<size_t, std::vector<std::unique_ptr<gpu::DeviceMemory>>> drop;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    drop.swap(free_);
    cached_ = 0;
  }
}

size_t BufferPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

}  // namespace nvhcq::tensor
