#pragma once
// The simulated GPU's memory: host pages standing in for device memory, and GPU
// virtual address spaces that map them. Driver allocations are memfd pages, so
// the CPU can map them wherever the driver asks (mmap of a device fd, MAP_FIXED
// honoured) while the simulated GPU reaches the same pages through its own view;
// host memory the driver wraps (user pages) is reached in place.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace nvhcq::sim {

// An access the simulated MMU refuses. Carries what a fault report needs.
struct SimFault {
  uint64_t va = 0;
  bool write = false;
  std::string what;
};

class MemoryObject {
 public:
  // `size` bytes of zeroed memfd pages (only touched pages cost memory).
  static std::shared_ptr<MemoryObject> create(uint64_t size, std::string label);
  // The process's own pages at `host` (not owned).
  static std::shared_ptr<MemoryObject> wrap(void* host, uint64_t size, std::string label);
  ~MemoryObject();
  MemoryObject(const MemoryObject&) = delete;
  MemoryObject& operator=(const MemoryObject&) = delete;

  uint8_t* host() const { return host_; }
  uint64_t size() const { return size_; }
  const std::string& label() const { return label_; }
  bool user_pages() const { return memfd_ < 0; }
  // Maps [offset, offset+length) for the CPU as mmap(2) would, honouring
  // MAP_FIXED at `addr`. Returns MAP_FAILED with errno set on failure.
  void* map_for_cpu(void* addr, uint64_t length, int prot, int flags, uint64_t offset) const;

  // Attributes drivers set: nvmap's caching flags (Tegra), a caching note (RM).
  uint32_t cache_flags = 0;
  bool cpu_cacheable = true;

 private:
  MemoryObject() = default;
  int memfd_ = -1;
  uint8_t* host_ = nullptr;
  uint64_t size_ = 0;
  std::string label_;
};

struct Mapping {
  uint64_t va = 0, size = 0;
  std::shared_ptr<MemoryObject> object;
  uint64_t offset = 0;  // into the object
  bool gpu_cacheable = true;
};

// One GPU virtual address space: mappings, plus reserved ranges (nvgpu's
// ALLOC_SPACE areas) that the top-down placement never uses. Safe to use from
// the CPU thread (driver calls) and the GPU thread (accesses) at once.
class AddressSpace {
 public:
  AddressSpace(uint64_t start, uint64_t end) : start_(start), end_(end) {}
  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; }

  // Maps at a fixed address; false if the range is outside the space or overlaps
  // a mapping.
  bool map(const Mapping& m);
  // The highest free range of `size` bytes aligned to `align`, avoiding mappings
  // and reservations: nvgpu's allocator hands out addresses from the top down.
  std::optional<uint64_t> place_top_down(uint64_t size, uint64_t align) const;
  // Removes the mapping starting at `va`; false if there is none.
  bool unmap(uint64_t va);
  // Removes every mapping starting in [lo, hi), or of `object`; returns how many.
  size_t unmap_range(uint64_t lo, uint64_t hi);
  size_t unmap_object(const MemoryObject* object);
  bool reserve(uint64_t va, uint64_t size);  // false on overlap with a reservation or mapping
  bool unreserve(uint64_t va);
  bool overlaps_mapping(uint64_t va, uint64_t size) const;
  bool inside_reservation(uint64_t va, uint64_t size) const;
  std::vector<std::pair<uint64_t, uint64_t>> reservations() const;
  std::optional<Mapping> lookup(uint64_t va) const;
  size_t mapping_count() const;

  // GPU accesses; throw SimFault for any byte that is not mapped.
  void read(uint64_t va, void* dst, uint64_t n) const;
  void write(uint64_t va, const void* src, uint64_t n) const;
  void copy(uint64_t dst, uint64_t src, uint64_t n) const;
  // A host pointer to [va, va+n) when one mapping covers it all (kept alive by
  // *keep); throws SimFault otherwise.
  uint8_t* span(uint64_t va, uint64_t n, bool write, std::shared_ptr<MemoryObject>* keep) const;
  // Semaphore-sized accesses (aligned, atomic with respect to the CPU).
  uint64_t load64(uint64_t va) const;
  uint32_t load32(uint64_t va) const;
  void store64(uint64_t va, uint64_t value) const;
  void store32(uint64_t va, uint32_t value) const;

 private:
  const Mapping* find_locked(uint64_t va) const;
  uint64_t start_, end_;
  mutable std::shared_mutex mutex_;
  std::map<uint64_t, Mapping> maps_;       // by va
  std::map<uint64_t, uint64_t> reserved_;  // va -> size
};

std::string hex(uint64_t v);

}  // namespace nvhcq::sim
