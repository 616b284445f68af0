#include "drv/va_allocator.h"

#include <iterator>
#include <string>

#include "base/error.h"

namespace nvhcq::drv {

VaAllocator::VaAllocator(uint64_t base, uint64_t size) { init(base, size); }

void VaAllocator::init(uint64_t base, uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.clear();
  used_.clear();
  if (size != 0) free_[base] = size;
}

uint64_t VaAllocator::alloc(uint64_t size, uint64_t alignment) {
  if (size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw Error("VA allocation of " + std::to_string(size) + " bytes with alignment " +
                std::to_string(alignment) + " is invalid");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    uint64_t start = (it->first + alignment - 1) & ~(alignment - 1);
    uint64_t end = it->first + it->second;
    if (start < it->first || start >= end || end - start < size) continue;
    uint64_t range_base = it->first, range_size = it->second;
    free_.erase(it);
    if (start > range_base) free_[range_base] = start - range_base;
    if (start + size < range_base + range_size) {
      free_[start + size] = range_base + range_size - (start + size);
    }
    used_[start] = size;
    return start;
  }
  throw OutOfMemoryError("GPU virtual address space exhausted (" + std::to_string(size) +
                         " bytes requested)");
}

void VaAllocator::free(uint64_t base) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.find(base);
  if (it == used_.end()) throw Error("free of unknown GPU VA range " + std::to_string(base));
  uint64_t size = it->second;
  used_.erase(it);
  insert_free(base, size);
}

void VaAllocator::insert_free(uint64_t base, uint64_t size) {
  auto next = free_.lower_bound(base);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == base) {
      base = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  next = free_.lower_bound(base);
  if (next != free_.end() && base + size == next->first) {
    size += next->second;
    free_.erase(next);
  }
  free_[base] = size;
}

void VaAllocator::reserve(uint64_t base, uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t end = base + size;
  for (auto it = free_.begin(); it != free_.end();) {
    uint64_t fb = it->first, fe = it->first + it->second;
    if (fe <= base || fb >= end) {
      ++it;
      continue;
    }
    it = free_.erase(it);
    if (fb < base) free_[fb] = base - fb;
    if (fe > end) free_[end] = fe - end;
  }
}

uint64_t VaAllocator::free_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = 0;
  for (const auto& [b, s] : free_) total += s;
  return total;
}

size_t VaAllocator::live_ranges() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_.size();
}

}  // namespace nvhcq::drv
