#pragma once
// Device memory for tensor buffers, cached by size class: a driver allocation
// (an RM ioctl on "nv", cuMemAlloc on "cuda") costs microseconds to milliseconds,
// and a graph allocates and drops many intermediate buffers. Sizes round up to a
// power of two from 256 bytes to 1 MiB, then to whole MiB. Freed blocks wait in
// per-class free lists; reusing one is safe without synchronizing because every
// kernel runs in one in-order stream, so earlier work on a block finishes before
// later work touches it (host uploads synchronize first). When the device runs
// out of memory the cache is released and the allocation retried.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/accelerator.h"

namespace nvhcq::tensor {

class BufferPool {
 public:
  explicit BufferPool(gpu::Accelerator& acc) : acc_(acc) {}
  ~BufferPool();

  static size_t size_class(size_t bytes);

  std::unique_ptr<gpu::DeviceMemory> take(size_t bytes);
  void give_back(std::unique_ptr<gpu::DeviceMemory> memory);
  // Frees every cached block.
  void trim();
  size_t cached_bytes() const;

 private:
  gpu::Accelerator& acc_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<std::unique_ptr<gpu::DeviceMemory>>> free_;
  size_t cached_ = 0;
};

}  // namespace nvhcq::tensor
