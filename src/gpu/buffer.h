#pragma once
// GPU-visible memory owned by a Device: video memory (optionally mapped for the
// CPU) or host memory mapped into the GPU. Freed when the Buffer goes away; a
// Buffer must not outlive its Device.

#include <cstddef>
#include <cstdint>

#include "drv/driver_iface.h"

namespace nvhcq::gpu {

class Device;

class Buffer {
 public:
  Buffer() = default;
  Buffer(Device* device, drv::Allocation allocation) : device_(device), alloc_(allocation) {}
  Buffer(Buffer&& other) noexcept : device_(other.device_), alloc_(other.alloc_) {
    other.device_ = nullptr;
    other.alloc_ = {};
  }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  bool valid() const { return alloc_.valid(); }
  uint64_t va() const { return alloc_.gpu_va; }
  size_t size() const { return alloc_.size; }
  void* cpu() const { return alloc_.cpu; }
  template <typename T>
  T* cpu_as() const { return static_cast<T*>(alloc_.cpu); }
  bool is_host() const { return alloc_.location == drv::MemLocation::kHost; }
  const drv::Allocation& allocation() const { return alloc_; }
  Device* device() const { return device_; }
  void reset();

 private:
  Device* device_ = nullptr;
  drv::Allocation alloc_;
};

}  // namespace nvhcq::gpu
