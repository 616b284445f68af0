#pragma once
// Allocation parameters of the RM classes nvhcq creates (nvos.h, cl0080.h,
// cl2080.h, cl0070.h, cl83de.h, alloc_channel.h in open-gpu-kernel-modules).

#include <cstdint>

#include "drv/rm/rm_abi.h"

namespace nvhcq::drv::rm {

struct Nv0080AllocParams {  // NV01_DEVICE_0
  uint32_t deviceId;
  NvHandle hClientShare;
  NvHandle hTargetClient;
  NvHandle hTargetDevice;
  uint32_t flags;
  alignas(8) uint64_t vaSpaceSize;
  alignas(8) uint64_t vaStartInternal;
  alignas(8) uint64_t vaLimitInternal;
  uint32_t vaMode;
};
static_assert(sizeof(Nv0080AllocParams) == 56);
constexpr uint32_t NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES = 0;

struct Nv2080AllocParams {  // NV20_SUBDEVICE_0
  uint32_t subDeviceId;
};

struct NvMemoryVirtualAllocParams {  // NV01_MEMORY_VIRTUAL
  alignas(8) uint64_t offset;
  alignas(8) uint64_t limit;
  NvHandle hVASpace;
};
static_assert(sizeof(NvMemoryVirtualAllocParams) == 24);

struct NvMemoryAllocationParams {  // NV01_MEMORY_LOCAL_USER, NV01_MEMORY_SYSTEM
  uint32_t owner;
  uint32_t type;
  uint32_t flags;
  uint32_t width;
  uint32_t height;
  int32_t pitch;
  uint32_t attr;
  uint32_t attr2;
  uint32_t format;
  uint32_t comprCovg;
  uint32_t zcullCovg;
  alignas(8) uint64_t rangeLo;
  alignas(8) uint64_t rangeHi;
  alignas(8) uint64_t size;
  alignas(8) uint64_t alignment;
  alignas(8) uint64_t offset;
  alignas(8) uint64_t limit;
  alignas(8) uint64_t address;
  uint32_t ctagOffset;
  NvHandle hVASpace;
  uint32_t internalflags;
  uint32_t tag;
  int32_t numaNode;
};
static_assert(sizeof(NvMemoryAllocationParams) == 128);

// NVOS32 surface types and attribute fields (nvos.h).
constexpr uint32_t NVOS32_TYPE_IMAGE = 0;
constexpr uint32_t NVOS32_TYPE_NOTIFIER = 13;
constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_4KB = field(1, 23);
constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_HUGE = field(3, 23);
constexpr uint32_t NVOS32_ATTR_LOCATION_VIDMEM = field(0, 25);
constexpr uint32_t NVOS32_ATTR_LOCATION_PCI = field(1, 25);
constexpr uint32_t NVOS32_ATTR_PHYSICALITY_CONTIGUOUS = field(2, 27);
constexpr uint32_t NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS = field(3, 27);
constexpr uint32_t NVOS32_ATTR_COHERENCY_CACHED = field(1, 29);
constexpr uint32_t NVOS32_ATTR2_ZBC_PREFER_NO_ZBC = field(1, 0);
constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_YES = field(1, 2);
constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_NO = field(2, 2);
constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB = field(1, 20);
constexpr uint32_t NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT = 0x00000001;
constexpr uint32_t NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE = 0x00000100;
constexpr uint32_t NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED = 0x00004000;
constexpr uint32_t NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED = 0x00008000;
constexpr uint32_t NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM = 0x00010000;

struct NvVaspaceAllocationParams {  // FERMI_VASPACE_A
  uint32_t index;
  uint32_t flags;
  alignas(8) uint64_t vaSize;
  alignas(8) uint64_t vaStartInternal;
  alignas(8) uint64_t vaLimitInternal;
  uint32_t bigPageSize;
  alignas(8) uint64_t vaBase;
  uint32_t pasid;
};
static_assert(sizeof(NvVaspaceAllocationParams) == 56);
constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED = 1u << 3;
constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING = 1u << 6;

struct NvChannelGroupAllocationParams {  // KEPLER_CHANNEL_GROUP_A
  NvHandle hObjectError;
  NvHandle hObjectEccError;
  NvHandle hVASpace;
  uint32_t engineType;
  uint8_t bIsCallingContextVgpuPlugin;
};
static_assert(sizeof(NvChannelGroupAllocationParams) == 20);
constexpr uint32_t NV2080_ENGINE_TYPE_GRAPHICS = 1;

struct NvCtxshareAllocationParams {  // FERMI_CONTEXT_SHARE_A
  NvHandle hVASpace;
  uint32_t flags;
  uint32_t subctxId;
};
constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC = 1;

struct NvMemoryDescParams {
  alignas(8) uint64_t base;
  alignas(8) uint64_t size;
  uint32_t addressSpace;
  uint32_t cacheAttrib;
};
static_assert(sizeof(NvMemoryDescParams) == 24);

constexpr int kMaxSubdevices = 8;  // NV_MAX_SUBDEVICES

struct NvChannelAllocParams {  // *_CHANNEL_GPFIFO_*
  NvHandle hObjectError;
  NvHandle hObjectBuffer;
  alignas(8) uint64_t gpFifoOffset;
  uint32_t gpFifoEntries;
  uint32_t flags;
  NvHandle hContextShare;
  NvHandle hVASpace;
  NvHandle hUserdMemory[kMaxSubdevices];
  alignas(8) uint64_t userdOffset[kMaxSubdevices];
  uint32_t engineType;
  uint32_t cid;
  uint32_t subDeviceId;
  NvHandle hObjectEccError;
  NvMemoryDescParams instanceMem;
  NvMemoryDescParams userdMem;
  NvMemoryDescParams ramfcMem;
  NvMemoryDescParams mthdbufMem;
  NvHandle hPhysChannelGroup;
  uint32_t internalFlags;
  NvMemoryDescParams errorNotifierMem;
  NvMemoryDescParams eccErrorNotifierMem;
  uint32_t ProcessID;
  uint32_t SubProcessID;
  uint32_t encryptIv[3];
  uint32_t decryptIv[3];
  uint32_t hmacNonce[8];
  uint32_t tpcConfigID;
};
static_assert(sizeof(NvChannelAllocParams) == 368);

struct Nv83deAllocParams {  // GT200_DEBUGGER
  NvHandle hDebuggerClient_Obsolete;
  NvHandle hAppClient;
  NvHandle hClass3dObject;
};

// The channel error notifier: RM writes entry 0 when it recovers the channel
// (robust-channel "RC" error): info32 carries the Xid, status becomes nonzero.
struct NvNotification {
  uint32_t time_stamp[2];
  uint32_t info32;
  uint16_t info16;
  uint16_t status;
};
static_assert(sizeof(NvNotification) == 16);

}  // namespace nvhcq::drv::rm
