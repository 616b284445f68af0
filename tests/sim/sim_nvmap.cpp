// The simulated Jetson's memory: nvmap handles and dma-bufs, and the nvgpu
// address space they are mapped into.

#include <sys/mman.h>

#include <cstring>

#include "sim/sim_tegra.h"

namespace nvhcq::sim {

using namespace drv::tegra;  // NOLINT: the ABI this file implements

namespace {

constexpr uint64_t kPage = 4096;

bool power_of_two(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

}  // namespace

// ---- dma-buf ----

void* DmabufFile::mmap(void* addr, size_t length, int prot, int flags, off_t offset, int* err) {
  if (!buffer_->memory || buffer_->memory->user_pages() || (flags & MAP_SHARED) == 0 ||
      offset % static_cast<off_t>(kPage) != 0) {
    *err = EINVAL;
    return MAP_FAILED;
  }
  void* p = buffer_->memory->map_for_cpu(addr, length, prot, flags, static_cast<uint64_t>(offset));
  if (p == MAP_FAILED) *err = errno;
  return p;
}

// ---- nvmap ----

bool NvmapFile::tag_ok(uint32_t flags, const char* what) {
  if (nvmap_tag_bits(flags) != 0) return true;
  // The kernel warns ("allocation tag not set") for every such allocation; the
  // simulator refuses it, so a missing tag cannot go unnoticed.
  fe_.machine().log().line(std::string("nvmap: ") + what +
                           " without an allocation tag in flags[31:16]");
  return false;
}

int NvmapFile::create(unsigned long request, NvmapCreateHandle* a) {
  uint64_t size = request == NVMAP_IOC_CREATE_64 ? a->size64 : a->size;
  if (size == 0) return -EINVAL;
  auto b = std::make_shared<NvmapBuffer>();
  b->size = (size + kPage - 1) / kPage * kPage;
  std::lock_guard<std::mutex> lock(mutex_);
  b->id = next_id_++;
  handles_[b->id] = b;
  if (request == NVMAP_IOC_CREATE_64) {
    a->size64 = 0;
    a->handle64 = b->id;
  } else {
    a->handle = b->id;
  }
  return 0;
}

int NvmapFile::alloc(NvmapAllocHandle* a) {
  std::shared_ptr<NvmapBuffer> b;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = handles_.find(a->handle);
    if (it == handles_.end()) return -EINVAL;
    b = it->second;
  }
  if (b->memory) return -EEXIST;
  // IOVMM is the heap the GPU can use; the legacy SYSMEM heap bit is refused.
  if ((a->heap_mask & NVMAP_HEAP_IOVMM) == 0 || (a->heap_mask & (1u << 31)) != 0) return -EINVAL;
  if (a->align != 0 && (!power_of_two(a->align) || a->align < kPage)) return -EINVAL;
  if (a->numa_nid != -1 && a->numa_nid != 0) return -EINVAL;
  if (!tag_ok(a->flags, "NVMAP_IOC_ALLOC")) return -EINVAL;
  b->heap_mask = a->heap_mask;
  b->flags = a->flags;
  b->align = a->align != 0 ? a->align : kPage;
  try {
    b->memory = MemoryObject::create(b->size, "nvmap handle " + std::to_string(b->id));
  } catch (const std::exception&) {
    return -ENOMEM;
  }
  b->memory->cache_flags = a->flags & NVMAP_HANDLE_CACHE_FLAG;
  fe_.record_alloc(NvmapAllocRecord{b->size, a->heap_mask, a->flags, b->align, false});
  return 0;
}

int NvmapFile::from_va(NvmapCreateHandleFromVa* a) {
  uint64_t size = a->size != 0 ? a->size : a->size64;
  if (a->va == 0 || a->va % kPage != 0 || size == 0 || size % kPage != 0) return -EINVAL;
  if (!tag_ok(a->flags, "NVMAP_IOC_FROM_VA")) return -EINVAL;
  // The pages must exist in this process (the kernel pins them).
  if (::msync(reinterpret_cast<void*>(a->va), size, MS_ASYNC) != 0) return -EFAULT;
  auto b = std::make_shared<NvmapBuffer>();
  b->size = size;
  b->flags = a->flags;
  b->heap_mask = NVMAP_HEAP_IOVMM;
  b->align = kPage;
  b->memory = MemoryObject::wrap(reinterpret_cast<void*>(a->va), size, "user pages");
  b->memory->cache_flags = a->flags & NVMAP_HANDLE_CACHE_FLAG;
  std::lock_guard<std::mutex> lock(mutex_);
  b->id = next_id_++;
  handles_[b->id] = b;
  a->handle = b->id;
  fe_.record_alloc(NvmapAllocRecord{size, b->heap_mask, a->flags, b->align, true});
  return 0;
}

int NvmapFile::get_fd(NvmapCreateHandle* a) {
  std::shared_ptr<NvmapBuffer> b;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = handles_.find(a->handle);
    if (it == handles_.end()) return -EINVAL;
    b = it->second;
  }
  if (!b->memory) return -EINVAL;  // no pages yet
  a->fd = fe_.machine().install(std::make_shared<DmabufFile>(b), "dmabuf:nvmap");
  return 0;
}

int NvmapFile::ioctl(unsigned long request, void* arg) {
  if (ioc_type(request) != kNvmapMagic) return -ENOTTY;
  switch (request) {
    case NVMAP_IOC_CREATE:
    case NVMAP_IOC_CREATE_64:
      return create(request, static_cast<NvmapCreateHandle*>(arg));
    case NVMAP_IOC_ALLOC:
      return alloc(static_cast<NvmapAllocHandle*>(arg));
    case NVMAP_IOC_FROM_VA:
      return from_va(static_cast<NvmapCreateHandleFromVa*>(arg));
    case NVMAP_IOC_GET_FD:
      return get_fd(static_cast<NvmapCreateHandle*>(arg));
    case NVMAP_IOC_FREE: {
      // The argument is the handle itself. The pages live on while a dma-buf
      // fd, a CPU mapping or a GPU mapping still holds them.
      auto id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(arg));
      std::lock_guard<std::mutex> lock(mutex_);
      if (handles_.erase(id) == 0) return -EINVAL;
      return 0;
    }
    default:
      return -ENOTTY;
  }
}

// ---- address space ----

AsFile::AsFile(TegraFrontEnd& fe, uint64_t start, uint64_t end)
    : fe_(fe), as_(std::make_shared<AddressSpace>(start, end)) {}

AsFile::~AsFile() = default;

uint64_t AsFile::map_anywhere(const std::shared_ptr<NvmapBuffer>& b, bool cacheable) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto va = as_->place_top_down(b->size, std::max<uint64_t>(kPage, b->align));
  if (!va) return 0;
  Mapping m{*va, b->size, b->memory, 0, cacheable};
  if (!as_->map(m)) return 0;
  mapped_[*va] = b;
  return *va;
}

void AsFile::unmap(uint64_t va) {
  std::lock_guard<std::mutex> lock(mutex_);
  as_->unmap(va);
  mapped_.erase(va);
}

int AsFile::alloc_space(NvgpuAsAllocSpaceArgs* a) {
  if (a->page_size != kPage || a->pages == 0) return -EINVAL;  // big pages are off
  if ((a->flags & ~(NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET | NVGPU_AS_ALLOC_SPACE_FLAGS_SPARSE)) !=
      0) {
    return -EINVAL;
  }
  uint64_t size = a->pages * a->page_size;
  std::lock_guard<std::mutex> lock(mutex_);
  if ((a->flags & NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET) != 0) {
    if (a->offset_or_align % a->page_size != 0) return -EINVAL;
    if (!as_->reserve(a->offset_or_align, size)) return -ENOMEM;
    return 0;
  }
  auto va = as_->place_top_down(size, std::max<uint64_t>(kPage, a->offset_or_align));
  if (!va || !as_->reserve(*va, size)) return -ENOMEM;
  a->offset_or_align = *va;
  return 0;
}

int AsFile::map_buffer_ex(NvgpuAsMapBufferExArgs* a) {
  constexpr uint32_t kKnownFlags = NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET |
                                   NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE | (1u << 5) | (1u << 6) |
                                   (1u << 7) | (1u << 9) | (3u << 10) | (1u << 12);
  if ((a->flags & ~kKnownFlags) != 0) return -EINVAL;
  if (a->compr_kind == NV_KIND_INVALID && a->incompr_kind == NV_KIND_INVALID) return -EINVAL;
  if (a->page_size != 0 && a->page_size != kPage) return -EINVAL;
  auto file = fe_.machine().file(static_cast<int>(a->dmabuf_fd));
  if (!file) return -EBADF;
  auto dmabuf = std::dynamic_pointer_cast<DmabufFile>(file);
  if (!dmabuf || !dmabuf->buffer()->memory) return -EINVAL;
  auto b = dmabuf->buffer();
  uint64_t size = a->mapping_size != 0 ? a->mapping_size : b->size - a->buffer_offset;
  if (a->buffer_offset % kPage != 0 || size % kPage != 0 || a->buffer_offset > b->size ||
      size > b->size - a->buffer_offset || size == 0) {
    return -EINVAL;
  }
  bool cacheable = (a->flags & NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE) != 0;
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t va;
  if ((a->flags & NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET) != 0) {
    // Fixed mappings go only into space reserved with ALLOC_SPACE.
    va = a->offset;
    if (va % kPage != 0 || !as_->inside_reservation(va, size)) return -EINVAL;
  } else {
    auto placed = as_->place_top_down(size, std::max<uint64_t>(kPage, b->align));
    if (!placed) return -ENOMEM;
    va = *placed;
  }
  if (!as_->map(Mapping{va, size, b->memory, a->buffer_offset, cacheable})) return -EINVAL;
  mapped_[va] = b;
  a->offset = va;
  return 0;
}

int AsFile::ioctl(unsigned long request, void* arg) {
  if (int rc = check_nvgpu_request(request, kAsMagic, 14, sizeof(NvgpuAsMapBufferExArgs));
      rc != 0) {
    return rc;
  }
  switch (request) {
    case NVGPU_AS_IOCTL_BIND_CHANNEL: {
      auto* a = static_cast<NvgpuAsBindChannelArgs*>(arg);
      auto ch = std::dynamic_pointer_cast<ChannelFile>(
          fe_.machine().file(static_cast<int>(a->channel_fd)));
      if (!ch || ch->as) return -EINVAL;
      ch->as = std::static_pointer_cast<AsFile>(shared_from_this());
      return 0;
    }
    case NVGPU_AS_IOCTL_ALLOC_SPACE:
      return alloc_space(static_cast<NvgpuAsAllocSpaceArgs*>(arg));
    case NVGPU_AS_IOCTL_FREE_SPACE: {
      auto* a = static_cast<NvgpuAsFreeSpaceArgs*>(arg);
      std::lock_guard<std::mutex> lock(mutex_);
      return as_->unreserve(a->offset) ? 0 : -EINVAL;
    }
    case NVGPU_AS_IOCTL_MAP_BUFFER_EX:
      return map_buffer_ex(static_cast<NvgpuAsMapBufferExArgs*>(arg));
    case NVGPU_AS_IOCTL_UNMAP_BUFFER: {
      auto* a = static_cast<NvgpuAsUnmapBufferArgs*>(arg);
      std::lock_guard<std::mutex> lock(mutex_);
      if (mapped_.erase(a->offset) == 0 || !as_->unmap(a->offset)) {
        // The kernel logs and returns success; a driver doing this has lost track.
        fe_.machine().log().violation("nvgpu: UNMAP_BUFFER of " + hex(a->offset) +
                                      ", where nothing is mapped");
      }
      return 0;
    }
    default:
      return -ENOTTY;
  }
}

}  // namespace nvhcq::sim
