#pragma once
// RM control commands (NV_ESC_RM_CONTROL) nvhcq issues, with their parameter
// structs (ctrl/*.h in open-gpu-kernel-modules).

#include <cstdint>

#include "drv/rm/rm_abi.h"

namespace nvhcq::drv::rm {

enum RmControl : uint32_t {
  NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 = 0x13e,
  NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 = 0x205,
  NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 = 0x800292,
  NV2080_CTRL_CMD_GPU_GET_NAME_STRING = 0x20800110,
  NV2080_CTRL_CMD_GPU_GET_GID_INFO = 0x2080014a,
  NV2080_CTRL_CMD_GR_GET_INFO = 0x20801201,
  NV2080_CTRL_CMD_GR_GET_TPC_MASK = 0x2080122b,
  NV2080_CTRL_CMD_FB_GET_INFO_V2 = 0x20801303,
  NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN = 0xc36f0108,
  NVA06C_CTRL_CMD_GPFIFO_SCHEDULE = 0xa06c0101,
  NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES = 0x83de030c,
  NV83DE_CTRL_CMD_DEBUG_CLEAR_ALL_SM_ERROR_STATES = 0x83de0310,
  NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO = 0x83de0328,
};

struct Nv0000BuildVersionV2Params {
  char driverVersionBuffer[256];
  char versionBuffer[256];
  char driverBranch[256];
  char titleBuffer[256];
  uint32_t changelistNumber;
  uint32_t officialChangelistNumber;
};
static_assert(sizeof(Nv0000BuildVersionV2Params) == 1032);

struct Nv0000GpuIdInfoV2Params {
  uint32_t gpuId;
  uint32_t gpuFlags;
  uint32_t deviceInstance;
  uint32_t subDeviceInstance;
  uint32_t sliStatus;
  uint32_t boardId;
  uint32_t gpuInstance;
  int32_t numaId;
};
static_assert(sizeof(Nv0000GpuIdInfoV2Params) == 32);

constexpr int kClassListMax = 200;  // NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE
struct Nv0080ClassListV2Params {
  uint32_t numClasses;
  uint32_t classList[kClassListMax];
};
static_assert(sizeof(Nv0080ClassListV2Params) == 804);

struct Nv2080NameStringParams {
  uint32_t gpuNameStringFlags;  // 0: ASCII
  uint8_t ascii[128];           // union with a 64-entry UTF-16 array
};
static_assert(sizeof(Nv2080NameStringParams) == 132);

struct Nv2080GidInfoParams {
  uint32_t index;
  uint32_t flags;
  uint32_t length;
  uint8_t data[256];
};
static_assert(sizeof(Nv2080GidInfoParams) == 268);
constexpr uint32_t NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY = 2;

struct NvIndexData {  // NVXXXX_CTRL_XXX_INFO: GR and FB info entries
  uint32_t index;
  uint32_t data;
};

struct Nv2080GrRouteInfo {
  uint32_t flags;
  alignas(8) uint64_t route;
};

struct Nv2080GrGetInfoParams {
  uint32_t grInfoListSize;
  alignas(8) uint64_t grInfoList;  // pointer to NvIndexData[grInfoListSize]
  Nv2080GrRouteInfo grRouteInfo;
};
static_assert(sizeof(Nv2080GrGetInfoParams) == 32);

enum GrInfoIndex : uint32_t {
  NV2080_CTRL_GR_INFO_INDEX_SM_VERSION = 0x0c,
  NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM = 0x0d,
  NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS = 0x14,
  NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC = 0x17,
  NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC = 0x20,
};

struct Nv2080GrGetTpcMaskParams {
  Nv2080GrRouteInfo grRouteInfo;
  uint32_t gpcId;
  uint32_t tpcMask;
};
static_assert(sizeof(Nv2080GrGetTpcMaskParams) == 24);

constexpr int kFbInfoMax = 128;  // NV2080_CTRL_FB_INFO_MAX_LIST_SIZE
struct Nv2080FbGetInfoV2Params {
  uint32_t fbInfoListSize;
  NvIndexData fbInfoList[kFbInfoMax];
};
static_assert(sizeof(Nv2080FbGetInfoV2Params) == 1028);
constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE = 0x08;  // KiB
constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE = 0x16;       // KiB

struct Nvc36fWorkSubmitTokenParams {
  uint32_t workSubmitToken;
};

struct Nva06cScheduleParams {
  uint8_t bEnable;
  uint8_t bSkipSubmit;
  uint8_t bSkipEnable;
};

struct Nv83deSmErrorState {
  uint32_t hwwGlobalEsr;
  uint32_t hwwWarpEsr;
  uint32_t hwwWarpEsrPc;
  uint32_t hwwGlobalEsrReportMask;
  uint32_t hwwWarpEsrReportMask;
  alignas(8) uint64_t hwwEsrAddr;
  alignas(8) uint64_t hwwWarpEsrPc64;
  uint32_t hwwCgaEsr;
  uint32_t hwwCgaEsrReportMask;
};
static_assert(sizeof(Nv83deSmErrorState) == 48);

constexpr int kMaxSmsPerCall = 100;  // NV83DE_CTRL_DEBUG_MAX_SMS_PER_CALL
struct Nv83deReadAllSmErrorStatesParams {
  NvHandle hTargetChannel;
  uint32_t numSMsToRead;
  Nv83deSmErrorState smErrorStateArray[kMaxSmsPerCall];
  uint32_t mmuFaultInfo;
  struct {
    uint8_t valid;
    uint32_t faultInfo;
  } mmuFault;
  uint32_t startingSM;
};
static_assert(sizeof(Nv83deReadAllSmErrorStatesParams) == 4824);


struct Nv83deClearAllSmErrorStatesParams {
  NvHandle hTargetChannel;
  uint32_t numSMsToClear;
};

struct Nv83deMmuFaultInfoEntry {
  alignas(8) uint64_t faultAddress;
  uint32_t faultType;
  uint32_t accessType;
};
struct Nv83deReadMmuFaultInfoParams {
  Nv83deMmuFaultInfoEntry mmuFaultInfoList[4];
  uint32_t count;
};
static_assert(sizeof(Nv83deReadMmuFaultInfoParams) == 72);

}  // namespace nvhcq::drv::rm
