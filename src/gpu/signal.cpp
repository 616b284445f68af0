#include "gpu/signal.h"

#include "gpu/device.h"

namespace nvhcq::gpu {

constexpr size_t kSignalBytes = 16;
constexpr size_t kPoolPageBytes = 64 << 10;

Signal::Signal(Signal&& other) noexcept : pool_(other.pool_), slot_(other.slot_), va_(other.va_) {
  other.pool_ = nullptr;
  other.slot_ = nullptr;
}

Signal& Signal::operator=(Signal&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pool_->release(slot_);
    pool_ = other.pool_;
    slot_ = other.slot_;
    va_ = other.va_;
    other.pool_ = nullptr;
    other.slot_ = nullptr;
  }
  return *this;
}

Signal::~Signal() {
  if (pool_ != nullptr) pool_->release(slot_);
}

Signal SignalPool::acquire(uint64_t initial_value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    pages_.push_back(device_->alloc_host(kPoolPageBytes));
    Buffer& page = pages_.back();
    auto* base = page.cpu_as<uint8_t>();
    for (size_t off = kPoolPageBytes; off >= kSignalBytes; off -= kSignalBytes) {
      free_.push_back(reinterpret_cast<uint64_t*>(base + off - kSignalBytes));
    }
  }
  uint64_t* slot = free_.back();
  free_.pop_back();
  ++live_;
  uint64_t va = 0;
  for (const auto& page : pages_) {
    auto* base = page.cpu_as<uint8_t>();
    auto* p = reinterpret_cast<uint8_t*>(slot);
    if (p >= base && p < base + page.size()) va = page.va() + static_cast<uint64_t>(p - base);
  }
  __atomic_store_n(&slot[1], 0, __ATOMIC_RELAXED);
  __atomic_store_n(&slot[0], initial_value, __ATOMIC_RELEASE);
  return Signal(this, slot, va);
}

void SignalPool::release(uint64_t* slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(slot);
  --live_;
}

size_t SignalPool::live() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

}  // namespace nvhcq::gpu
