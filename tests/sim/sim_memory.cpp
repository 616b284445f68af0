#include "sim/sim_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>

#include "base/error.h"

namespace nvhcq::sim {

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::shared_ptr<MemoryObject> MemoryObject::create(uint64_t size, std::string label) {
  std::shared_ptr<MemoryObject> m(new MemoryObject());
  m->size_ = size;
  m->label_ = std::move(label);
  m->memfd_ = ::memfd_create("nvhcq-sim", MFD_CLOEXEC);
  check_errno(m->memfd_ >= 0, "memfd_create for simulated GPU memory", "memfd_create");
  check_errno(::ftruncate(m->memfd_, static_cast<off_t>(size)) == 0, "size simulated GPU memory",
              "ftruncate");
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, m->memfd_, 0);
  check_errno(p != MAP_FAILED, "map simulated GPU memory", "mmap");
  m->host_ = static_cast<uint8_t*>(p);
  return m;
}

std::shared_ptr<MemoryObject> MemoryObject::wrap(void* host, uint64_t size, std::string label) {
  std::shared_ptr<MemoryObject> m(new MemoryObject());
  m->size_ = size;
  m->label_ = std::move(label);
  m->host_ = static_cast<uint8_t*>(host);
  return m;
}

MemoryObject::~MemoryObject() {
  if (memfd_ >= 0) {
    ::munmap(host_, size_);
    ::close(memfd_);
  }
}

void* MemoryObject::map_for_cpu(void* addr, uint64_t length, int prot, int flags,
                                uint64_t offset) const {
  if (memfd_ < 0 || offset > size_ || length > size_ - offset || length == 0) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  return ::mmap(addr, length, prot,
                (flags & (MAP_FIXED | MAP_SHARED | MAP_PRIVATE)) | MAP_NORESERVE, memfd_,
                static_cast<off_t>(offset));
}

bool AddressSpace::map(const Mapping& m) {
  std::unique_lock lock(mutex_);
  if (m.size == 0 || m.va < start_ || m.va + m.size > end_ || m.va + m.size < m.va) return false;
  auto next = maps_.lower_bound(m.va);
  if (next != maps_.end() && next->first < m.va + m.size) return false;
  if (next != maps_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > m.va) return false;
  }
  maps_[m.va] = m;
  return true;
}

std::optional<uint64_t> AddressSpace::place_top_down(uint64_t size, uint64_t align) const {
  std::shared_lock lock(mutex_);
  // Occupied ranges, merged view of mappings and reservations, highest first.
  std::map<uint64_t, uint64_t> used(reserved_.begin(), reserved_.end());
  for (const auto& [va, m] : maps_) used[va] = std::max(used[va], m.size);
  uint64_t top = end_;
  auto consider = [&](uint64_t gap_lo, uint64_t gap_hi) -> std::optional<uint64_t> {
    if (gap_hi < gap_lo + size || gap_hi < size) return std::nullopt;
    uint64_t base = (gap_hi - size) / align * align;
    if (base >= gap_lo) return base;
    return std::nullopt;
  };
  for (auto it = used.rbegin(); it != used.rend(); ++it) {
    uint64_t lo = it->first, hi = it->first + it->second;
    if (hi < top) {
      if (auto b = consider(hi, top)) return b;
    }
    top = std::min(top, lo);
  }
  return consider(start_, top);
}

bool AddressSpace::unmap(uint64_t va) {
  std::unique_lock lock(mutex_);
  return maps_.erase(va) != 0;
}

size_t AddressSpace::unmap_range(uint64_t lo, uint64_t hi) {
  std::unique_lock lock(mutex_);
  size_t n = 0;
  for (auto it = maps_.lower_bound(lo); it != maps_.end() && it->first < hi;) {
    it = maps_.erase(it);
    ++n;
  }
  return n;
}

size_t AddressSpace::unmap_object(const MemoryObject* object) {
  std::unique_lock lock(mutex_);
  size_t n = 0;
  for (auto it = maps_.begin(); it != maps_.end();) {
    if (it->second.object.get() == object) {
      it = maps_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

bool AddressSpace::reserve(uint64_t va, uint64_t size) {
  std::unique_lock lock(mutex_);
  if (size == 0 || va < start_ || va + size > end_) return false;
  for (const auto& [b, s] : reserved_) {
    if (b < va + size && va < b + s) return false;
  }
  for (const auto& [b, m] : maps_) {
    if (b < va + size && va < b + m.size) return false;
  }
  reserved_[va] = size;
  return true;
}

bool AddressSpace::unreserve(uint64_t va) {
  std::unique_lock lock(mutex_);
  return reserved_.erase(va) != 0;
}

bool AddressSpace::overlaps_mapping(uint64_t va, uint64_t size) const {
  std::shared_lock lock(mutex_);
  for (const auto& [b, m] : maps_) {
    if (b < va + size && va < b + m.size) return true;
  }
  return false;
}

bool AddressSpace::inside_reservation(uint64_t va, uint64_t size) const {
  std::shared_lock lock(mutex_);
  for (const auto& [b, s] : reserved_) {
    if (va >= b && va + size <= b + s) return true;
  }
  return false;
}

std::vector<std::pair<uint64_t, uint64_t>> AddressSpace::reservations() const {
  std::shared_lock lock(mutex_);
  return {reserved_.begin(), reserved_.end()};
}

size_t AddressSpace::mapping_count() const {
  std::shared_lock lock(mutex_);
  return maps_.size();
}

const Mapping* AddressSpace::find_locked(uint64_t va) const {
  auto it = maps_.upper_bound(va);
  if (it == maps_.begin()) return nullptr;
  --it;
  if (va >= it->first + it->second.size) return nullptr;
  return &it->second;
}

std::optional<Mapping> AddressSpace::lookup(uint64_t va) const {
  std::shared_lock lock(mutex_);
  const Mapping* m = find_locked(va);
  if (m == nullptr) return std::nullopt;
  return *m;
}

uint8_t* AddressSpace::span(uint64_t va, uint64_t n, bool write,
                            std::shared_ptr<MemoryObject>* keep) const {
  std::shared_lock lock(mutex_);
  const Mapping* m = find_locked(va);
  if (m == nullptr) throw SimFault{va, write, "no mapping at " + hex(va)};
  if (n > m->va + m->size - va) {
    uint64_t end = m->va + m->size;
    throw SimFault{end, write,
                   "access of " + std::to_string(n) + " bytes at " + hex(va) +
                       " runs past the mapping ending at " + hex(end)};
  }
  if (keep != nullptr) *keep = m->object;
  return m->object->host() + m->offset + (va - m->va);
}

void AddressSpace::read(uint64_t va, void* dst, uint64_t n) const {
  auto* out = static_cast<uint8_t*>(dst);
  while (n > 0) {
    std::shared_ptr<MemoryObject> keep;
    uint64_t chunk;
    const uint8_t* p;
    {
      std::shared_lock lock(mutex_);
      const Mapping* m = find_locked(va);
      if (m == nullptr) throw SimFault{va, false, "read of unmapped GPU VA " + hex(va)};
      chunk = std::min(n, m->va + m->size - va);
      keep = m->object;
      p = m->object->host() + m->offset + (va - m->va);
    }
    std::memcpy(out, p, chunk);
    out += chunk;
    va += chunk;
    n -= chunk;
  }
}

void AddressSpace::write(uint64_t va, const void* src, uint64_t n) const {
  const auto* in = static_cast<const uint8_t*>(src);
  while (n > 0) {
    std::shared_ptr<MemoryObject> keep;
    uint64_t chunk;
    uint8_t* p;
    {
      std::shared_lock lock(mutex_);
      const Mapping* m = find_locked(va);
      if (m == nullptr) throw SimFault{va, true, "write to unmapped GPU VA " + hex(va)};
      chunk = std::min(n, m->va + m->size - va);
      keep = m->object;
      p = m->object->host() + m->offset + (va - m->va);
    }
    std::memcpy(p, in, chunk);
    in += chunk;
    va += chunk;
    n -= chunk;
  }
}

void AddressSpace::copy(uint64_t dst, uint64_t src, uint64_t n) const {
  // In pieces no larger than either side's current mapping.
  while (n > 0) {
    std::shared_ptr<MemoryObject> keep_src, keep_dst;
    uint64_t src_left, dst_left;
    const uint8_t* s;
    uint8_t* d;
    {
      std::shared_lock lock(mutex_);
      const Mapping* ms = find_locked(src);
      if (ms == nullptr) throw SimFault{src, false, "copy from unmapped GPU VA " + hex(src)};
      const Mapping* md = find_locked(dst);
      if (md == nullptr) throw SimFault{dst, true, "copy to unmapped GPU VA " + hex(dst)};
      src_left = ms->va + ms->size - src;
      dst_left = md->va + md->size - dst;
      keep_src = ms->object;
      keep_dst = md->object;
      s = ms->object->host() + ms->offset + (src - ms->va);
      d = md->object->host() + md->offset + (dst - md->va);
    }
    uint64_t chunk = std::min({n, src_left, dst_left});
    std::memmove(d, s, chunk);
    src += chunk;
    dst += chunk;
    n -= chunk;
  }
}

uint64_t AddressSpace::load64(uint64_t va) const {
  std::shared_ptr<MemoryObject> keep;
  auto* p = reinterpret_cast<uint64_t*>(span(va, 8, false, &keep));
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

uint32_t AddressSpace::load32(uint64_t va) const {
  std::shared_ptr<MemoryObject> keep;
  auto* p = reinterpret_cast<uint32_t*>(span(va, 4, false, &keep));
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

void AddressSpace::store64(uint64_t va, uint64_t value) const {
  std::shared_ptr<MemoryObject> keep;
  auto* p = reinterpret_cast<uint64_t*>(span(va, 8, true, &keep));
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
}

void AddressSpace::store32(uint64_t va, uint32_t value) const {
  std::shared_ptr<MemoryObject> keep;
  auto* p = reinterpret_cast<uint32_t*>(span(va, 4, true, &keep));
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
}

}  // namespace nvhcq::sim
