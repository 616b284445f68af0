#pragma once
// The ioctl ABI of nvidia-uvm.ko (kernel-open/nvidia-uvm/uvm_ioctl.h,
// uvm_linux_ioctl.h, uvm_types.h) for driver 580.x. UVM ioctl requests are the
// plain command numbers below, not _IOWR encodings.

#include <cstdint>

#include "drv/rm/rm_abi.h"

namespace nvhcq::drv::rm {

enum UvmIoctl : unsigned long {
  UVM_INITIALIZE = 0x30000001,
  UVM_REGISTER_GPU_VASPACE = 25,
  UVM_UNREGISTER_GPU_VASPACE = 26,
  UVM_REGISTER_CHANNEL = 27,
  UVM_UNREGISTER_CHANNEL = 28,
  UVM_MAP_EXTERNAL_ALLOCATION = 33,
  UVM_FREE = 34,
  UVM_REGISTER_GPU = 37,
  UVM_UNREGISTER_GPU = 38,
  UVM_CREATE_EXTERNAL_RANGE = 73,
  UVM_MM_INITIALIZE = 75,
};

struct NvUuid {
  uint8_t bytes[16];
};

struct UvmInitializeParams {
  alignas(8) uint64_t flags;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmInitializeParams) == 16);

struct UvmMmInitializeParams {
  int32_t uvmFd;
  NvStatus rmStatus;
};

struct UvmRegisterGpuParams {
  NvUuid gpu_uuid;
  uint8_t numaEnabled;
  int32_t numaNodeId;
  int32_t rmCtrlFd;
  NvHandle hClient;
  NvHandle hSmcPartRef;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmRegisterGpuParams) == 40);

struct UvmUnregisterGpuParams {
  NvUuid gpu_uuid;
  NvStatus rmStatus;
};

struct UvmRegisterGpuVaspaceParams {
  NvUuid gpuUuid;
  int32_t rmCtrlFd;
  NvHandle hClient;
  NvHandle hVaSpace;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmRegisterGpuVaspaceParams) == 32);

struct UvmUnregisterGpuVaspaceParams {
  NvUuid gpuUuid;
  NvStatus rmStatus;
};

struct UvmRegisterChannelParams {
  NvUuid gpuUuid;
  int32_t rmCtrlFd;
  NvHandle hClient;
  NvHandle hChannel;
  alignas(8) uint64_t base;
  alignas(8) uint64_t length;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmRegisterChannelParams) == 56);

struct UvmUnregisterChannelParams {
  NvUuid gpuUuid;
  NvHandle hClient;
  NvHandle hChannel;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmUnregisterChannelParams) == 28);

struct UvmCreateExternalRangeParams {
  alignas(8) uint64_t base;
  alignas(8) uint64_t length;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmCreateExternalRangeParams) == 24);

struct UvmGpuMappingAttributes {
  NvUuid gpuUuid;
  uint32_t gpuMappingType;  // 1: read-write-atomic
  uint32_t gpuCachingType;  // 0: default
  uint32_t gpuFormatType;
  uint32_t gpuElementBits;
  uint32_t gpuCompressionType;
};
static_assert(sizeof(UvmGpuMappingAttributes) == 36);

constexpr int kUvmMaxGpus = 256;  // NV_MAX_DEVICES * UVM_PARENT_ID_MAX_SUB_PROCESSORS
struct UvmMapExternalAllocationParams {
  alignas(8) uint64_t base;
  alignas(8) uint64_t length;
  alignas(8) uint64_t offset;
  UvmGpuMappingAttributes perGpuAttributes[kUvmMaxGpus];
  alignas(8) uint64_t gpuAttributesCount;
  int32_t rmCtrlFd;
  uint32_t hClient;
  uint32_t hMemory;
  NvStatus rmStatus;
};


struct UvmFreeParams {
  alignas(8) uint64_t base;
  alignas(8) uint64_t length;
  NvStatus rmStatus;
};
static_assert(sizeof(UvmFreeParams) == 24);

}  // namespace nvhcq::drv::rm
