#pragma once
// A first-fit allocator of GPU virtual address ranges with real frees (so long
// runs of alloc/free do not exhaust the VA space) and reservations (the shader
// shared/local-memory windows must never be handed out).

#include <cstdint>
#include <map>
#include <mutex>

namespace nvhcq::drv {

class VaAllocator {
 public:
  VaAllocator() = default;
  VaAllocator(uint64_t base, uint64_t size);
  void init(uint64_t base, uint64_t size);

  // Returns the base of a free range of `size` bytes aligned to `alignment` (a power
  // of two); throws OutOfMemoryError when none is left.
  uint64_t alloc(uint64_t size, uint64_t alignment);
  // Returns a range handed out by alloc(); throws Error for an unknown base.
  void free(uint64_t base);
  // Removes [base, base+size) from the free space, wherever it overlaps.
  void reserve(uint64_t base, uint64_t size);

  uint64_t free_bytes() const;
  size_t live_ranges() const;

 private:
  void insert_free(uint64_t base, uint64_t size);

  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> free_;  // base -> size, coalesced
  std::map<uint64_t, uint64_t> used_;  // base -> size
};

}  // namespace nvhcq::drv
