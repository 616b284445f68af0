// TegraGpu's memory: nvmap IOVMM buffers (cacheable, tagged), their CPU
// mappings through dma-buf fds, their GPU mappings (MAP_BUFFER_EX at addresses
// the kernel chooses, never inside a reserved range), host memory wrapped with
// NVMAP_IOC_FROM_VA, and reservations of GPU VA ranges (ALLOC_SPACE).

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "drv/tegra/nvgpu_abi.h"
#include "drv/tegra/nvmap_abi.h"
#include "drv/tegra/tegra_gpu.h"

namespace nvhcq::drv::tegra {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kHugeAlign = 2ull << 20;
// From this size up, buffers are 2 MiB aligned (and sized): fewer SMMU and GPU
// TLB entries, and large buffers do not fragment the VA space into odd holes.
constexpr uint64_t kHugeAlignThreshold = 8ull << 20;

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

Fd TegraGpu::nvmap_dmabuf(uint32_t handle) {
  NvmapCreateHandle get{};
  get.handle = handle;
  ioctl_or_throw(nvmap_.get(), NVMAP_IOC_GET_FD, &get, "NVMAP_IOC_GET_FD");
  return Fd(get.fd);
}

TegraGpu::NvmapBuffer TegraGpu::nvmap_alloc(uint64_t size, uint32_t cache_flags) {
  uint64_t align = size >= kHugeAlignThreshold ? kHugeAlign : kPage;
  NvmapBuffer b;
  b.size = round_up(size, align);
  NvmapCreateHandle create{};
  create.size64 = b.size;
  ioctl_or_throw(nvmap_.get(), NVMAP_IOC_CREATE_64, &create, "NVMAP_IOC_CREATE_64");
  b.handle = create.handle64;
  try {
    NvmapAllocHandle a{};
    a.handle = b.handle;
    a.heap_mask = NVMAP_HEAP_IOVMM;
    a.flags = cache_flags | (kNvhcqNvmapTag << kNvmapTagShift);
    a.align = static_cast<uint32_t>(align);
    a.numa_nid = -1;
    ioctl_or_throw(nvmap_.get(), NVMAP_IOC_ALLOC, &a, "NVMAP_IOC_ALLOC");
    Fd dmabuf = nvmap_dmabuf(b.handle);
    // The mapping keeps the dma-buf alive; the fd is closed right away so that
    // thousands of live buffers do not use thousands of fds.
    void* p = sys().mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf.get(), 0);
    check_errno(p != MAP_FAILED, "map nvmap memory for the CPU", "mmap");
    b.cpu = p;
  } catch (...) {
    nvmap_free(b);
    throw;
  }
  return b;
}

void TegraGpu::nvmap_free(NvmapBuffer& b) {
  if (b.cpu != nullptr && !b.user_pages) sys().munmap(b.cpu, b.size);
  if (b.handle != 0) {
    if (sys().ioctl(nvmap_.get(), NVMAP_IOC_FREE,
                    reinterpret_cast<void*>(static_cast<uintptr_t>(b.handle))) != 0) {
      log::warn("NVMAP_IOC_FREE of handle ", b.handle, " failed: ", std::strerror(errno));
    }
  }
  b = NvmapBuffer{};
}

uint64_t TegraGpu::gpu_map(uint32_t handle, bool gpu_cached) {
  Fd dmabuf = nvmap_dmabuf(handle);
  NvgpuAsMapBufferExArgs m{};
  m.flags = gpu_cached ? NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE : 0;
  m.compr_kind = NV_KIND_INVALID;
  m.incompr_kind = kKindPitch;
  m.dmabuf_fd = static_cast<uint32_t>(dmabuf.get());
  m.page_size = static_cast<uint32_t>(kPage);  // big pages are off in this address space
  ioctl_or_throw(as_.get(), NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m, "NVGPU_AS_IOCTL_MAP_BUFFER_EX");
  return m.offset;
}

void TegraGpu::gpu_unmap(uint64_t gpu_va) {
  if (gpu_va == 0) return;
  NvgpuAsUnmapBufferArgs u{};
  u.offset = gpu_va;
  ioctl_or_throw(as_.get(), NVGPU_AS_IOCTL_UNMAP_BUFFER, &u, "NVGPU_AS_IOCTL_UNMAP_BUFFER");
}

Allocation TegraGpu::alloc(size_t size, const MemFlags& flags) {
  if (size == 0) throw Error("cannot allocate 0 bytes of GPU memory");
  // Everything is cacheable for the CPU, pushbuffers included: the GPU's host
  // engine raises errors on write-combined pushbuffers, and the SoC keeps CPU
  // caches coherent with the GPU. `cpu_access` is implied: memory is unified.
  NvmapBuffer b = nvmap_alloc(size, NVMAP_HANDLE_CACHEABLE);
  try {
    b.gpu_va = gpu_map(b.handle, flags.gpu_cached);
  } catch (...) {
    nvmap_free(b);
    throw;
  }
  for (const auto& [base, bytes] : reservations_) {
    if (b.gpu_va < base + bytes && base < b.gpu_va + b.size) {
      // The kernel must never do this; if it did, kernels would fault here.
      log::error("nvgpu mapped a buffer at ", hex(b.gpu_va), " inside the reserved range at ",
                 hex(base));
    }
  }
  Allocation a;
  a.gpu_va = b.gpu_va;
  a.cpu = b.cpu;
  a.size = b.size;
  a.location = flags.location;
  a.handle = b.handle;
  std::lock_guard<std::mutex> lock(alloc_mutex_);
  live_[a.gpu_va] = b;
  return a;
}

Allocation TegraGpu::map_host(void* ptr, size_t size) {
  auto addr = reinterpret_cast<uint64_t>(ptr);
  if (ptr == nullptr || size == 0 || addr % kPage != 0 || size % kPage != 0) {
    throw Error("map_host needs a page-aligned pointer and size (got " + hex(addr) + ", " +
                std::to_string(size) + ")");
  }
  // A real mapping of the caller's pages: nvmap pins them behind a handle, and the
  // GPU maps that handle like any other buffer.
  NvmapCreateHandleFromVa from{};
  from.va = addr;
  if (size < (1ull << 32)) {
    from.size = static_cast<uint32_t>(size);
  } else {
    from.size = 0;
    from.size64 = size;
  }
  from.flags = NVMAP_HANDLE_CACHEABLE | (kNvhcqNvmapTag << kNvmapTagShift);
  ioctl_or_throw(nvmap_.get(), NVMAP_IOC_FROM_VA, &from, "NVMAP_IOC_FROM_VA");
  NvmapBuffer b;
  b.handle = from.handle;
  b.cpu = ptr;
  b.size = size;
  b.user_pages = true;
  try {
    b.gpu_va = gpu_map(b.handle, true);
  } catch (...) {
    nvmap_free(b);
    throw;
  }
  Allocation a;
  a.gpu_va = b.gpu_va;
  a.cpu = ptr;
  a.size = size;
  a.location = MemLocation::kHost;
  a.handle = b.handle;
  a.wraps_user_memory = true;
  std::lock_guard<std::mutex> lock(alloc_mutex_);
  live_[a.gpu_va] = b;
  return a;
}

void TegraGpu::free(Allocation& a) {
  if (!a.valid()) return;
  NvmapBuffer b;
  {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    auto it = live_.find(a.gpu_va);
    if (it == live_.end()) throw Error("free of GPU memory nvhcq did not allocate");
    b = it->second;
    live_.erase(it);
  }
  try {
    gpu_unmap(b.gpu_va);
  } catch (const Error& e) {
    log::warn("while freeing GPU memory: ", e.what());
  }
  nvmap_free(b);
  a = Allocation{};
}

void TegraGpu::reserve_va(uint64_t base, uint64_t size) {
  if (base % kPage != 0 || size % kPage != 0 || size == 0 || base < va_start_ ||
      base + size > va_end_) {
    throw Error("cannot reserve GPU VA [" + hex(base) + ", " + hex(base + size) +
                "): it must be page-aligned and inside [" + hex(va_start_) + ", " + hex(va_end_) +
                ")");
  }
  {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    for (const auto& [va, b] : live_) {
      if (va < base + size && base < va + b.size) {
        throw Error("GPU VA " + hex(base) +
                    " must be reserved before any allocation; the buffer at " + hex(va) +
                    " already lies there");
      }
    }
  }
  // Keeps the kernel's VA allocator away from the range: a buffer placed inside
  // the shader shared- or local-memory window would be unreachable (MMU fault).
  NvgpuAsAllocSpaceArgs s{};
  s.pages = size / kPage;
  s.page_size = static_cast<uint32_t>(kPage);
  s.flags = NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET;
  s.offset_or_align = base;
  ioctl_or_throw(as_.get(), NVGPU_AS_IOCTL_ALLOC_SPACE, &s, "NVGPU_AS_IOCTL_ALLOC_SPACE");
  reservations_.emplace_back(base, size);
}

}  // namespace nvhcq::drv::tegra
