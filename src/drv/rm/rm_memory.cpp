// RmGpu's memory: video memory (4 KiB or 2 MiB pages), host memory wrapped
// from user pages, CPU mappings, and GPU mappings at chosen addresses through
// UVM external ranges.

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "base/error.h"
#include "base/log.h"
#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_client.h"
#include "drv/rm/rm_gpu.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/rm_status.h"

namespace nvhcq::drv::rm {
namespace {

constexpr uint64_t kSmallPage = 4096;
constexpr uint64_t kHugePage = 2ull << 20;
// Allocations from this size up use 2 MiB GPU pages (fewer TLB misses; the
// rounding waste is at most a quarter of the allocation).
constexpr uint64_t kHugePageThreshold = 8ull << 20;
constexpr uint32_t kFormatPitch = 6;  // NV_MEMORY_ALLOCATION_PARAMS.format for plain buffers

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

// Puts the PROT_NONE reservation back over a range that held a CPU mapping.
void rereserve(void* addr, size_t size) {
  void* p = sys().mmap(addr, size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) log::warn("could not re-reserve CPU range after free: ", strerror(errno));
}

}  // namespace

void RmGpu::map_into_gpu(uint64_t va, uint64_t size, NvHandle memory) {
  RmClient& rm = RmClient::instance();
  UvmCreateExternalRangeParams range{};
  range.base = va;
  range.length = size;
  uvm_->call(UVM_CREATE_EXTERNAL_RANGE, range, "UVM_CREATE_EXTERNAL_RANGE");

  Nvos46 dma{};
  dma.hClient = rm.root();
  dma.hDevice = device_;
  dma.hDma = virtmem_;
  dma.hMemory = memory;
  dma.length = size;
  dma.flags = NVOS46_FLAGS_PAGE_SIZE_4KB | NVOS46_FLAGS_CACHE_SNOOP_ENABLE |
              NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE;
  dma.dmaOffset = va;
  if (sys().ioctl(rm.ctl_fd(), ioctl_request(NV_ESC_RM_MAP_MEMORY_DMA, sizeof(dma)), &dma) != 0 ||
      dma.status != NV_OK) {
    UvmFreeParams undo{va, size, 0};
    uvm_->call(UVM_FREE, undo, "UVM_FREE");
    throw Error("map memory at GPU VA 0x" + std::to_string(va) + ": " + status_name(dma.status),
                "NV_ESC_RM_MAP_MEMORY_DMA", dma.status);
  }

  auto map = std::make_unique<UvmMapExternalAllocationParams>();
  map->base = va;
  map->length = size;
  map->perGpuAttributes[0].gpuUuid = uuid_;
  map->perGpuAttributes[0].gpuMappingType = 1;  // UvmGpuMappingTypeReadWriteAtomic
  map->gpuAttributesCount = 1;
  map->rmCtrlFd = rm.ctl_fd();
  map->hClient = rm.root();
  map->hMemory = memory;
  try {
    uvm_->call(UVM_MAP_EXTERNAL_ALLOCATION, *map, "UVM_MAP_EXTERNAL_ALLOCATION");
  } catch (...) {
    UvmFreeParams undo{va, size, 0};
    try {
      uvm_->call(UVM_FREE, undo, "UVM_FREE");
    } catch (const Error& e) {
      log::warn(e.what());
    }
    throw;
  }
}

Allocation RmGpu::alloc(size_t size, const MemFlags& flags) {
  if (size == 0) throw Error("cannot allocate 0 bytes of GPU memory");
  if (flags.location == MemLocation::kHost) {
    uint64_t bytes = round_up(size, kSmallPage);
    uint64_t va = cpu_va_.alloc(bytes, kSmallPage);
    void* p = sys().mmap(reinterpret_cast<void*>(va), bytes, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) {
      cpu_va_.free(va);
      throw OutOfMemoryError("host memory for the GPU: " + std::string(strerror(errno)), "mmap",
                             errno);
    }
    try {
      Allocation a = wrap_host_pages(p, bytes, /*caller_owns=*/false);
      return a;
    } catch (...) {
      rereserve(p, bytes);
      cpu_va_.free(va);
      throw;
    }
  }

  RmClient& rm = RmClient::instance();
  bool huge = size >= kHugePageThreshold;
  uint64_t page = huge ? kHugePage : kSmallPage;
  uint64_t bytes = round_up(size, page);
  VaAllocator& space = flags.cpu_access ? cpu_va_ : gpu_va_;
  uint64_t va = space.alloc(bytes, page);

  NvMemoryAllocationParams p{};
  p.owner = rm.root();
  p.type = NVOS32_TYPE_IMAGE;
  p.flags = NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
            NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT |
            NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM;
  p.attr = (flags.contiguous ? NVOS32_ATTR_PHYSICALITY_CONTIGUOUS
                             : NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS) |
           (huge ? NVOS32_ATTR_PAGE_SIZE_HUGE : 0) | NVOS32_ATTR_LOCATION_VIDMEM;
  p.attr2 = NVOS32_ATTR2_ZBC_PREFER_NO_ZBC |
            (flags.gpu_cached ? NVOS32_ATTR2_GPU_CACHEABLE_YES : NVOS32_ATTR2_GPU_CACHEABLE_NO) |
            (huge ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0);
  p.format = kFormatPitch;
  p.size = bytes;
  p.alignment = page;
  p.limit = bytes - 1;
  NvHandle memory = 0;
  try {
    memory = rm.alloc(device_, NV01_MEMORY_LOCAL_USER, p, "allocate video memory");
  } catch (...) {
    space.free(va);
    throw;
  }

  Allocation a;
  a.gpu_va = va;
  a.size = bytes;
  a.location = MemLocation::kDevice;
  a.handle = memory;
  try {
    if (flags.cpu_access) {
      // Write-combined: the CPU streams pushbuffers, kernel arguments and uploads
      // into video memory through BAR1 and never reads them back.
      rm.map_to_cpu(device_, memory, bytes, reinterpret_cast<void*>(va),
                    NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED, minor_, false);
      a.cpu = reinterpret_cast<void*>(va);
    }
    map_into_gpu(va, bytes, memory);
  } catch (...) {
    if (a.cpu != nullptr) rereserve(a.cpu, bytes);
    rm.free(device_, memory);
    space.free(va);
    throw;
  }
  std::lock_guard<std::mutex> lock(alloc_mutex_);
  live_[va] = a;
  return a;
}

Allocation RmGpu::wrap_host_pages(void* ptr, size_t size, bool caller_owns) {
  RmClient& rm = RmClient::instance();
  Nvos02WithFd os{};
  os.params.hRoot = rm.root();
  os.params.hObjectParent = device_;
  os.params.hObjectNew = rm.next_handle();
  os.params.hClass = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
  os.params.flags = NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS | NVOS02_FLAGS_COHERENCY_CACHED |
                    NVOS02_FLAGS_MAPPING_NO_MAP;
  os.params.pMemory = reinterpret_cast<uint64_t>(ptr);
  os.params.limit = size - 1;
  os.fd = -1;
  if (sys().ioctl(gpu_fd_.get(), ioctl_request(NV_ESC_RM_ALLOC_MEMORY, sizeof(os)), &os) != 0 ||
      os.params.status != NV_OK) {
    throw Error("wrap host memory for the GPU: " + status_name(os.params.status),
                "NV_ESC_RM_ALLOC_MEMORY", os.params.status,
                "host memory must be page-aligned, resident and writable");
  }
  uint64_t va = reinterpret_cast<uint64_t>(ptr);
  try {
    map_into_gpu(va, size, os.params.hObjectNew);
  } catch (...) {
    rm.free(device_, os.params.hObjectNew);
    throw;
  }
  Allocation a;
  a.gpu_va = va;
  a.cpu = ptr;
  a.size = size;
  a.location = MemLocation::kHost;
  a.handle = os.params.hObjectNew;
  a.wraps_user_memory = caller_owns;
  std::lock_guard<std::mutex> lock(alloc_mutex_);
  live_[va] = a;
  return a;
}

Allocation RmGpu::map_host(void* ptr, size_t size) {
  auto addr = reinterpret_cast<uint64_t>(ptr);
  if (ptr == nullptr || size == 0 || addr % kSmallPage != 0 || size % kSmallPage != 0) {
    throw Error("map_host needs a page-aligned pointer and size (got " + std::to_string(addr) +
                ", " + std::to_string(size) + ")");
  }
  return wrap_host_pages(ptr, size, /*caller_owns=*/true);
}

void RmGpu::free(Allocation& a) {
  if (!a.valid()) return;
  {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    if (live_.erase(a.gpu_va) == 0) throw Error("free of GPU memory nvhcq did not allocate");
  }
  RmClient& rm = RmClient::instance();
  UvmFreeParams unmap{a.gpu_va, a.size, 0};
  try {
    uvm_->call(UVM_FREE, unmap, "UVM_FREE");
  } catch (const Error& e) {
    log::warn("while freeing GPU memory: ", e.what());
  }
  rm.free(device_, static_cast<NvHandle>(a.handle));
  if (a.location == MemLocation::kHost) {
    if (!a.wraps_user_memory) {
      rereserve(a.cpu, a.size);
      cpu_va_.free(a.gpu_va);
    }
  } else if (a.cpu != nullptr) {
    rereserve(a.cpu, a.size);
    cpu_va_.free(a.gpu_va);
  } else {
    gpu_va_.free(a.gpu_va);
  }
  a = Allocation{};
}

NvHandle RmGpu::alloc_sysmem_notifier(size_t size) {
  RmClient& rm = RmClient::instance();
  NvMemoryAllocationParams p{};
  p.owner = rm.root();
  p.type = NVOS32_TYPE_NOTIFIER;
  p.flags = NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
            NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT;
  p.attr = NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS | NVOS32_ATTR_LOCATION_PCI;
  p.attr2 = NVOS32_ATTR2_ZBC_PREFER_NO_ZBC | NVOS32_ATTR2_GPU_CACHEABLE_NO;
  p.format = kFormatPitch;
  p.size = size;
  p.alignment = kSmallPage;
  p.limit = size - 1;
  NvHandle memory = rm.alloc(device_, NV01_MEMORY_SYSTEM, p, "allocate the channel error notifier");
  void* where =
      sys().mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  check_errno(where != MAP_FAILED, "reserve address space for the error notifier", "mmap");
  rm.map_to_cpu(device_, memory, size, where, NVOS33_FLAGS_CACHING_TYPE_CACHED, minor_, true);
  notifier_cpu_ = static_cast<volatile NvNotification*>(where);
  notifier_size_ = size;
  return memory;
}

}  // namespace nvhcq::drv::rm
