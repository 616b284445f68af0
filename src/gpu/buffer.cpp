#include "gpu/buffer.h"

#include "base/log.h"
#include "gpu/device.h"

namespace nvhcq::gpu {

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    alloc_ = other.alloc_;
    other.device_ = nullptr;
    other.alloc_ = {};
  }
  return *this;
}

void Buffer::reset() {
  if (device_ != nullptr && alloc_.valid()) {
    try {
      device_->free(alloc_);
    } catch (const std::exception& e) {
      log::warn("freeing a GPU buffer failed: ", e.what());
    }
  }
  device_ = nullptr;
  alloc_ = {};
}

}  // namespace nvhcq::gpu
