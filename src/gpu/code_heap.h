#pragma once
// GPU memory for kernel images (code and constant data), carved out of a few
// CPU-visible chunks. A buffer of its own per kernel would cost an RM allocation,
// a UVM mapping and a CPU mapping (a /proc/self/maps entry) each, and programs
// that compile a kernel per shape load thousands of kernels in a long run.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "drv/va_allocator.h"
#include "gpu/buffer.h"

namespace nvhcq::gpu {

class Device;
class CodeHeap;

// A range of the code heap, returned to it when destroyed. Whoever frees one must
// know that no launch still runs its code (as for any GPU buffer).
class CodeBlock {
 public:
  CodeBlock() = default;
  CodeBlock(CodeHeap* heap, uint64_t va, uint8_t* cpu) : heap_(heap), va_(va), cpu_(cpu) {}
  CodeBlock(CodeBlock&& other) noexcept { *this = std::move(other); }
  CodeBlock& operator=(CodeBlock&& other) noexcept;
  CodeBlock(const CodeBlock&) = delete;
  CodeBlock& operator=(const CodeBlock&) = delete;
  ~CodeBlock() { reset(); }
  void reset();

  uint64_t va() const { return va_; }
  uint8_t* cpu() const { return cpu_; }

 private:
  CodeHeap* heap_ = nullptr;
  uint64_t va_ = 0;
  uint8_t* cpu_ = nullptr;
};

class CodeHeap {
 public:
  // Chunks are this large unless one image needs more.
  static constexpr uint64_t kChunkBytes = 2ull << 20;
  // Blocks start on this boundary (code wants 128 bytes, constant banks 256).
  static constexpr uint64_t kBlockAlign = 4096;
  // Each block is followed by this much mapped memory: the instruction
  // prefetcher reads past the end of the code.
  static constexpr uint64_t kGuardBytes = 4096;

  explicit CodeHeap(Device& device) : device_(device) {}

  // A block of at least `bytes`, CPU-writable; throws OutOfMemoryError.
  CodeBlock alloc(size_t bytes);
  size_t chunks() const;

 private:
  friend class CodeBlock;
  void free(uint64_t va);

  struct Chunk {
    Buffer memory;
    drv::VaAllocator ranges;
    size_t live = 0;
  };
  Device& device_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Chunk>> chunks_;
};

}  // namespace nvhcq::gpu
