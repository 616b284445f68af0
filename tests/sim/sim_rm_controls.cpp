// The simulated RM driver's controls (NV_ESC_RM_CONTROL): the ones nvhcq
// issues, each on the object class it belongs to and with its exact parameter
// size.

#include <cstring>
#include <vector>

#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/rm_status.h"
#include "sim/sim_rm.h"

namespace nvhcq::sim {

using namespace drv::rm;  // NOLINT: the ABI this file implements

namespace {

constexpr uint32_t NV_ERR_INVALID_CLIENT = 0x23, NV_ERR_INVALID_ARGUMENT = 0x1f,
                   NV_ERR_INVALID_OBJECT_HANDLE = 0x33, NV_ERR_INVALID_PARAM_STRUCT = 0x3a,
                   NV_ERR_INVALID_POINTER = 0x3d, NV_ERR_NOT_SUPPORTED = 0x56;

struct ControlRule {
  uint32_t cmd;
  uint32_t size;
};

// The object class (family) a control's id names in its upper 16 bits.
bool class_matches(uint32_t family, uint32_t cls) {
  switch (family) {
    case 0x0000:
      return cls == NV01_ROOT_CLIENT;
    case 0x0080:
      return cls == NV01_DEVICE_0;
    case 0x2080:
      return cls == NV20_SUBDEVICE_0;
    case 0xa06c:
      return cls == KEPLER_CHANNEL_GROUP_A;
    case 0xc36f:
      return cls == HOPPER_CHANNEL_GPFIFO_A || cls == AMPERE_CHANNEL_GPFIFO_A;
    case 0x83de:
      return cls == GT200_DEBUGGER;
    default:
      return false;
  }
}

void copy_string(char* dst, size_t size, const std::string& s) {
  std::memset(dst, 0, size);
  std::memcpy(dst, s.data(), std::min(size - 1, s.size()));
}

}  // namespace

uint32_t RmFrontEnd::control(Nvos54* p) {
  static const std::vector<ControlRule> kRules = {
      {NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, sizeof(Nv0000BuildVersionV2Params)},
      {NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, sizeof(Nv0000GpuIdInfoV2Params)},
      {NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, sizeof(Nv0080ClassListV2Params)},
      {NV2080_CTRL_CMD_GPU_GET_NAME_STRING, sizeof(Nv2080NameStringParams)},
      {NV2080_CTRL_CMD_GPU_GET_GID_INFO, sizeof(Nv2080GidInfoParams)},
      {NV2080_CTRL_CMD_GR_GET_INFO, sizeof(Nv2080GrGetInfoParams)},
      {NV2080_CTRL_CMD_GR_GET_TPC_MASK, sizeof(Nv2080GrGetTpcMaskParams)},
      {NV2080_CTRL_CMD_FB_GET_INFO_V2, sizeof(Nv2080FbGetInfoV2Params)},
      {NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, sizeof(Nvc36fWorkSubmitTokenParams)},
      {NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(Nva06cScheduleParams)},
      {NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, sizeof(Nv83deReadAllSmErrorStatesParams)},
      {NV83DE_CTRL_CMD_DEBUG_CLEAR_ALL_SM_ERROR_STATES, sizeof(Nv83deClearAllSmErrorStatesParams)},
      {NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, sizeof(Nv83deReadMmuFaultInfoParams)},
  };
  RmObject* client = find(p->hClient);
  if (client == nullptr || client->cls != NV01_ROOT_CLIENT) return NV_ERR_INVALID_CLIENT;
  RmObject* o = find(p->hObject);
  if (o == nullptr) return NV_ERR_INVALID_OBJECT_HANDLE;
  const ControlRule* rule = nullptr;
  for (const auto& r : kRules) {
    if (r.cmd == p->cmd) rule = &r;
  }
  if (rule == nullptr || !class_matches(p->cmd >> 16, o->cls)) return NV_ERR_NOT_SUPPORTED;
  if (p->paramsSize != rule->size) return NV_ERR_INVALID_PARAM_STRUCT;
  if (p->params == 0) return NV_ERR_INVALID_POINTER;
  void* params = reinterpret_cast<void*>(p->params);

  switch (p->cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: {
      auto* v = static_cast<Nv0000BuildVersionV2Params*>(params);
      copy_string(v->driverVersionBuffer, sizeof(v->driverVersionBuffer), kDriverVersion);
      copy_string(v->versionBuffer, sizeof(v->versionBuffer), kDriverVersion);
      copy_string(v->driverBranch, sizeof(v->driverBranch), "r580_00");
      copy_string(v->titleBuffer, sizeof(v->titleBuffer),
                  "NVIDIA UNIX Open Kernel Module (simulated)");
      return NV_OK;
    }
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
      auto* v = static_cast<Nv0000GpuIdInfoV2Params*>(params);
      if (v->gpuId != 0x1b00) return NV_ERR_INVALID_ARGUMENT;
      v->deviceInstance = 0;
      v->subDeviceInstance = 0;
      v->numaId = -1;
      return NV_OK;
    }
    case NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: {
      auto* v = static_cast<Nv0080ClassListV2Params*>(params);
      const uint32_t classes[] = {NV01_ROOT_CLIENT,
                                  NV01_DEVICE_0,
                                  NV20_SUBDEVICE_0,
                                  NV01_MEMORY_SYSTEM,
                                  NV01_MEMORY_LOCAL_USER,
                                  NV01_MEMORY_VIRTUAL,
                                  NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
                                  GT200_DEBUGGER,
                                  FERMI_CONTEXT_SHARE_A,
                                  FERMI_VASPACE_A,
                                  KEPLER_CHANNEL_GROUP_A,
                                  HOPPER_USERMODE_A,
                                  HOPPER_CHANNEL_GPFIFO_A,
                                  HOPPER_COMPUTE_A,
                                  HOPPER_DMA_COPY_A};
      v->numClasses = sizeof(classes) / sizeof(classes[0]);
      std::memcpy(v->classList, classes, sizeof(classes));
      return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_NAME_STRING: {
      auto* v = static_cast<Nv2080NameStringParams*>(params);
      if (v->gpuNameStringFlags != 0) return NV_ERR_INVALID_ARGUMENT;
      copy_string(reinterpret_cast<char*>(v->ascii), sizeof(v->ascii),
                  "NVIDIA H100 80GB HBM3 (simulated)");
      return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
      auto* v = static_cast<Nv2080GidInfoParams*>(params);
      if (v->flags != NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY)
        return NV_ERR_INVALID_ARGUMENT;
      std::memcpy(v->data, uuid_.bytes, 16);
      v->length = 16;
      return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_INFO: {
      auto* v = static_cast<Nv2080GrGetInfoParams*>(params);
      if (v->grInfoListSize == 0 || v->grInfoListSize > 64 || v->grInfoList == 0) {
        return NV_ERR_INVALID_ARGUMENT;
      }
      auto* list = reinterpret_cast<NvIndexData*>(v->grInfoList);
      for (uint32_t i = 0; i < v->grInfoListSize; ++i) {
        switch (list[i].index) {
          case NV2080_CTRL_GR_INFO_INDEX_SM_VERSION:
            list[i].data = spec_.sm_version;
            break;
          case NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM:
            list[i].data = spec_.max_warps_per_sm;
            break;
          case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS:
            list[i].data = spec_.num_gpcs;
            break;
          case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC:
            list[i].data = spec_.tpc_per_gpc;
            break;
          case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC:
            list[i].data = spec_.sm_per_tpc;
            break;
          default:
            return NV_ERR_INVALID_ARGUMENT;
        }
      }
      return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_TPC_MASK: {
      auto* v = static_cast<Nv2080GrGetTpcMaskParams*>(params);
      if (v->gpcId >= spec_.num_gpcs) return NV_ERR_INVALID_ARGUMENT;
      // 66 of 72 TPCs: six full GPCs and two with six TPCs, as an H100 SXM is fused.
      v->tpcMask = v->gpcId < 6 ? 0x1ff : 0x3f;
      return NV_OK;
    }
    case NV2080_CTRL_CMD_FB_GET_INFO_V2: {
      auto* v = static_cast<Nv2080FbGetInfoV2Params*>(params);
      if (v->fbInfoListSize == 0 || v->fbInfoListSize > kFbInfoMax) return NV_ERR_INVALID_ARGUMENT;
      for (uint32_t i = 0; i < v->fbInfoListSize; ++i) {
        switch (v->fbInfoList[i].index) {
          case NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE:
          case NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE:
            v->fbInfoList[i].data = static_cast<uint32_t>((80ull << 30) >> 10);
            break;
          default:
            return NV_ERR_INVALID_ARGUMENT;
        }
      }
      return NV_OK;
    }
    case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN:
      static_cast<Nvc36fWorkSubmitTokenParams*>(params)->workSubmitToken =
          o->channel->config().token;
      return NV_OK;
    case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: {
      auto* v = static_cast<Nva06cScheduleParams*>(params);
      for (NvHandle c : o->children) {
        if (RmObject* ch = find(c); ch != nullptr && ch->channel)
          ch->channel->set_runnable(v->bEnable != 0);
      }
      return NV_OK;
    }
    case NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES: {
      auto* v = static_cast<Nv83deReadAllSmErrorStatesParams*>(params);
      RmObject* ch = find(v->hTargetChannel);
      if (ch == nullptr || !ch->channel || v->numSMsToRead > kMaxSmsPerCall)
        return NV_ERR_INVALID_ARGUMENT;
      std::memset(v->smErrorStateArray, 0, sizeof(v->smErrorStateArray));
      if (fault_valid_ && fault_kind_ == FaultKind::kGraphics) {
        v->smErrorStateArray[0].hwwGlobalEsr = 0x4;
        v->smErrorStateArray[0].hwwWarpEsr = 0x10;
      }
      v->mmuFault.valid = fault_valid_ && fault_kind_ == FaultKind::kMmu;
      return NV_OK;
    }
    case NV83DE_CTRL_CMD_DEBUG_CLEAR_ALL_SM_ERROR_STATES:
      fault_valid_ = false;
      return NV_OK;
    case NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO: {
      auto* v = static_cast<Nv83deReadMmuFaultInfoParams*>(params);
      std::memset(v, 0, sizeof(*v));
      if (fault_valid_ && fault_kind_ == FaultKind::kMmu) {
        v->count = 1;
        v->mmuFaultInfoList[0].faultAddress = fault_va_ & ~0xfffull;
        v->mmuFaultInfoList[0].faultType = 2;  // FAULT_PTE: no valid mapping
        v->mmuFaultInfoList[0].accessType = 1;
      }
      return NV_OK;
    }
    default:
      return NV_ERR_NOT_SUPPORTED;
  }
}

}  // namespace nvhcq::sim
