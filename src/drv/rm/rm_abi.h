#pragma once
// The ioctl ABI of nvidia.ko's RM (resource manager) for driver 580.x, written
// from NVIDIA/open-gpu-kernel-modules (nv-ioctl.h, nv_escape.h, nvos.h). Every
// struct's size is static_assert'ed; tests/drv/rm_abi_test.cpp also checks
// field offsets. Only what nvhcq uses is declared.

#include <cstddef>
#include <cstdint>

namespace nvhcq::drv::rm {

using NvHandle = uint32_t;
using NvStatus = uint32_t;

// ioctl numbers on /dev/nvidiactl and /dev/nvidiaN: _IOWR('F', nr, size).
constexpr uint32_t kIoctlMagic = 'F';
constexpr unsigned long ioctl_request(uint32_t nr, size_t size) {
  return (3ul << 30) | (static_cast<unsigned long>(size & 0x3fff) << 16) |
         (static_cast<unsigned long>(kIoctlMagic) << 8) | (nr & 0xff);
}

// Escapes (nv_escape.h, nv-ioctl-numbers.h).
enum Escape : uint32_t {
  NV_ESC_RM_ALLOC_MEMORY = 0x27,
  NV_ESC_RM_FREE = 0x29,
  NV_ESC_RM_CONTROL = 0x2A,
  NV_ESC_RM_ALLOC = 0x2B,
  NV_ESC_RM_MAP_MEMORY = 0x4E,
  NV_ESC_RM_UNMAP_MEMORY = 0x4F,
  NV_ESC_RM_MAP_MEMORY_DMA = 0x57,
  NV_ESC_RM_UNMAP_MEMORY_DMA = 0x58,
  NV_ESC_CARD_INFO = 200 + 0,
  NV_ESC_REGISTER_FD = 200 + 1,
  NV_ESC_CHECK_VERSION_STR = 200 + 10,
};

struct NvPciInfo {
  uint32_t domain;
  uint8_t bus, slot, function;
  uint16_t vendor_id, device_id;
};
static_assert(sizeof(NvPciInfo) == 12);

// NV_ESC_CARD_INFO takes an array of these (one per possible GPU).
struct NvCardInfo {
  uint8_t valid;  // NvBool
  NvPciInfo pci_info;
  uint32_t gpu_id;
  uint16_t interrupt_line;
  alignas(8) uint64_t reg_address;
  alignas(8) uint64_t reg_size;
  alignas(8) uint64_t fb_address;
  alignas(8) uint64_t fb_size;
  uint32_t minor_number;
  uint8_t dev_name[10];
};
static_assert(sizeof(NvCardInfo) == 72);
constexpr int kMaxCards = 32;  // NV_MAX_DEVICES

struct NvRegisterFd {
  int ctl_fd;
};

struct NvRmApiVersion {
  uint32_t cmd;
  uint32_t reply;
  char version_string[64];
};
constexpr uint32_t NV_RM_API_VERSION_CMD_QUERY = '2';

// NVOS21: NV_ESC_RM_ALLOC.
struct Nvos21 {
  NvHandle hRoot;
  NvHandle hObjectParent;
  NvHandle hObjectNew;
  uint32_t hClass;
  alignas(8) uint64_t pAllocParms;
  uint32_t paramsSize;
  NvStatus status;
};
static_assert(sizeof(Nvos21) == 32);

// NVOS00: NV_ESC_RM_FREE.
struct Nvos00 {
  NvHandle hRoot;
  NvHandle hObjectParent;
  NvHandle hObjectOld;
  NvStatus status;
};
static_assert(sizeof(Nvos00) == 16);

// NVOS54: NV_ESC_RM_CONTROL.
struct Nvos54 {
  NvHandle hClient;
  NvHandle hObject;
  uint32_t cmd;
  uint32_t flags;
  alignas(8) uint64_t params;
  uint32_t paramsSize;
  NvStatus status;
};
static_assert(sizeof(Nvos54) == 32);

// NVOS33: NV_ESC_RM_MAP_MEMORY, passed with the fd that is then mmap'd.
struct Nvos33 {
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hMemory;
  alignas(8) uint64_t offset;
  alignas(8) uint64_t length;
  alignas(8) uint64_t pLinearAddress;
  NvStatus status;
  uint32_t flags;
};
static_assert(sizeof(Nvos33) == 48);
struct Nvos33WithFd {
  Nvos33 params;
  int fd;
};
static_assert(sizeof(Nvos33WithFd) == 56);

// NVOS34: NV_ESC_RM_UNMAP_MEMORY.
struct Nvos34 {
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hMemory;
  alignas(8) uint64_t pLinearAddress;
  NvStatus status;
  uint32_t flags;
};
static_assert(sizeof(Nvos34) == 32);

// NVOS46: NV_ESC_RM_MAP_MEMORY_DMA.
struct Nvos46 {
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hDma;
  NvHandle hMemory;
  alignas(8) uint64_t offset;
  alignas(8) uint64_t length;
  uint32_t flags;
  uint32_t flags2;
  uint32_t kindOverride;
  alignas(8) uint64_t dmaOffset;
  NvStatus status;
};
static_assert(sizeof(Nvos46) == 64);

// NVOS47: NV_ESC_RM_UNMAP_MEMORY_DMA.
struct Nvos47 {
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hDma;
  NvHandle hMemory;
  uint32_t flags;
  alignas(8) uint64_t dmaOffset;
  alignas(8) uint64_t size;
  NvStatus status;
};


// NVOS02: NV_ESC_RM_ALLOC_MEMORY (OS-descriptor memory: user pages).
struct Nvos02 {
  NvHandle hRoot;
  NvHandle hObjectParent;
  NvHandle hObjectNew;
  uint32_t hClass;
  uint32_t flags;
  alignas(8) uint64_t pMemory;
  alignas(8) uint64_t limit;
  NvStatus status;
};
static_assert(sizeof(Nvos02) == 48);
struct Nvos02WithFd {
  Nvos02 params;
  int fd;
};
static_assert(sizeof(Nvos02WithFd) == 56);

// Field helpers for the DRF-style flag words: value << low bit.
constexpr uint32_t field(uint32_t value, uint32_t low_bit) { return value << low_bit; }

// NVOS02 flags.
constexpr uint32_t NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS = field(1, 4);
constexpr uint32_t NVOS02_FLAGS_COHERENCY_CACHED = field(1, 12);
constexpr uint32_t NVOS02_FLAGS_MAPPING_NO_MAP = field(1, 30);

// NVOS33 flags: the CPU caching of a mapping.
constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_CACHED = field(0, 23);
constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_UNCACHED = field(1, 23);
constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED = field(2, 23);

// NVOS46 flags.
constexpr uint32_t NVOS46_FLAGS_CACHE_SNOOP_ENABLE = field(1, 4);
constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_4KB = field(1, 8);
constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_HUGE = field(4, 8);
constexpr uint32_t NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE = field(1, 15);

}  // namespace nvhcq::drv::rm
