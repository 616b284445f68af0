#pragma once
// The ioctl ABI of nvmap (/dev/nvmap, the Tegra memory allocator) that nvhcq
// uses, written from the L4T r36 UAPI header nvmap.h (nvidia-oot) and the heap
// and flag values of nvmap's kernel header. A buffer's life: CREATE (a handle of
// a size) -> ALLOC (pages from a heap, with caching flags and a tag) -> GET_FD
// (a dma-buf fd, what mmap and nvgpu's MAP_BUFFER_EX take) -> FREE.

#include <cstddef>
#include <cstdint>

#include "drv/tegra/nvgpu_abi.h"

namespace nvhcq::drv::tegra {

constexpr char kNvmapMagic = 'N';

// A union in the header. CREATE_64 takes size64 in bytes 0..7 and returns the
// handle in bytes 0..3 (handle64); GET_FD takes the handle in bytes 4..7 and
// returns the dma-buf fd in bytes 0..3.
struct NvmapCreateHandle {
  union {
    struct {
      union {
        uint32_t size;
        int32_t fd;
      };
      uint32_t handle;
    };
    uint64_t size64;
    uint32_t handle64;
  };
};
static_assert(sizeof(NvmapCreateHandle) == 8);

// NVMAP_IOC_FROM_VA: a handle for pages the process already has (host memory).
struct NvmapCreateHandleFromVa {
  uint64_t va;     // page-aligned
  uint32_t size;   // bytes; 0 with size64 for sizes of 4 GiB and more
  uint32_t flags;  // caching flags and tag, as for ALLOC
  union {
    uint32_t handle;  // out
    uint64_t size64;  // in, when size is 0
  };
};
static_assert(sizeof(NvmapCreateHandleFromVa) == 24);

struct NvmapAllocHandle {
  uint32_t handle;
  uint32_t heap_mask;  // NVMAP_HEAP_*
  uint32_t flags;      // NVMAP_HANDLE_* caching | tag << 16
  uint32_t align;      // bytes, a power of two
  int32_t numa_nid;    // -1: any node
};
static_assert(sizeof(NvmapAllocHandle) == 20);

constexpr unsigned long NVMAP_IOC_CREATE = iowr<NvmapCreateHandle>(kNvmapMagic, 0);
constexpr unsigned long NVMAP_IOC_CREATE_64 = iowr<NvmapCreateHandle>(kNvmapMagic, 1);
constexpr unsigned long NVMAP_IOC_ALLOC = iow<NvmapAllocHandle>(kNvmapMagic, 3);
// FREE takes the handle itself as the ioctl argument, not a pointer.
constexpr unsigned long NVMAP_IOC_FREE = io(kNvmapMagic, 4);
constexpr unsigned long NVMAP_IOC_GET_FD = iowr<NvmapCreateHandle>(kNvmapMagic, 15);
constexpr unsigned long NVMAP_IOC_FROM_VA = iowr<NvmapCreateHandleFromVa>(kNvmapMagic, 22);

// Heaps. IOVMM (pages behind the SMMU) is the one the GPU uses; SYSMEM is refused.
constexpr uint32_t NVMAP_HEAP_IOVMM = 1u << 30;
// Caching (bits 1:0). CACHEABLE is what CUDA uses and what the GPU's host (PBDMA)
// needs for pushbuffers: write-combined pushbuffers raise PBDMA/SKED errors.
constexpr uint32_t NVMAP_HANDLE_UNCACHEABLE = 0;
constexpr uint32_t NVMAP_HANDLE_WRITE_COMBINE = 1;
constexpr uint32_t NVMAP_HANDLE_INNER_CACHEABLE = 2;
constexpr uint32_t NVMAP_HANDLE_CACHEABLE = 3;
constexpr uint32_t NVMAP_HANDLE_CACHE_FLAG = 3;
// Bits 31:16 carry the allocation's tag: nvmap warns in the kernel log for every
// allocation without one, and uses it to account memory per client.
constexpr uint32_t kNvmapTagShift = 16;
constexpr uint32_t nvmap_tag_bits(uint32_t flags) {
  return flags >> kNvmapTagShift;
}
// nvhcq's tag (the predecessor used 0x0900; any nonzero 16-bit value is valid).
constexpr uint32_t kNvhcqNvmapTag = 0x0901;

}  // namespace nvhcq::drv::tegra
