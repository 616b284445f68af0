#pragma once
// Signals: 64-bit timeline values in GPU-visible host memory, each with the GPU
// timestamp of its last release. The GPU releases (writes) and acquires (waits
// for) them from pushbuffers; the CPU reads, writes and waits on them.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gpu/buffer.h"

namespace nvhcq::gpu {

class SignalPool;

class Signal {
 public:
  Signal() = default;
  Signal(Signal&& other) noexcept;
  Signal& operator=(Signal&& other) noexcept;
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  ~Signal();

  bool valid() const { return slot_ != nullptr; }
  uint64_t value() const { return __atomic_load_n(&slot_[0], __ATOMIC_ACQUIRE); }
  void set(uint64_t v) { __atomic_store_n(&slot_[0], v, __ATOMIC_RELEASE); }
  // GPU timestamp (nanoseconds of the GPU's global timer) of the last release.
  uint64_t timestamp() const { return __atomic_load_n(&slot_[1], __ATOMIC_ACQUIRE); }
  uint64_t va() const { return va_; }

 private:
  friend class SignalPool;
  Signal(SignalPool* pool, uint64_t* slot, uint64_t va) : pool_(pool), slot_(slot), va_(va) {}
  SignalPool* pool_ = nullptr;
  uint64_t* slot_ = nullptr;
  uint64_t va_ = 0;
};

// Hands out 16-byte signal slots from host-memory pages, growing by a page of
// slots when it runs out and reusing returned slots.
class SignalPool {
 public:
  explicit SignalPool(Device* device) : device_(device) {}
  Signal acquire(uint64_t initial_value);
  void release(uint64_t* slot);
  size_t live() const;

 private:
  Device* device_;
  mutable std::mutex mutex_;
  std::vector<Buffer> pages_;
  std::vector<uint64_t*> free_;
  size_t live_ = 0;
};

}  // namespace nvhcq::gpu
