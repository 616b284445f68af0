// The RM and UVM structs of drv/rm against the sizes and field offsets of the
// same structs in NVIDIA's open-gpu-kernel-modules headers (580 branch), as
// measured by compiling those headers. A mismatch means an ioctl would be
// refused or, worse, misread.

#include <gtest/gtest.h>

#include <cstddef>

#include "drv/rm/rm_abi.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/uvm_abi.h"

namespace nvhcq::drv::rm {
namespace {

TEST(RmAbi, StructLayoutsMatchTheDriverHeaders) {
  EXPECT_EQ(sizeof(Nv2080GrGetTpcMaskParams), 24u);
  EXPECT_EQ(sizeof(UvmUnregisterChannelParams), 28u);
  EXPECT_EQ(sizeof(NvCardInfo), 72u);
  EXPECT_EQ(offsetof(NvCardInfo, gpu_id), 16u);
  EXPECT_EQ(offsetof(NvCardInfo, minor_number), 56u);
  EXPECT_EQ(offsetof(NvCardInfo, fb_size), 48u);
  EXPECT_EQ(sizeof(NvRmApiVersion), 72u);
  EXPECT_EQ(sizeof(Nvos21), 32u);
  EXPECT_EQ(offsetof(Nvos21, pAllocParms), 16u);
  EXPECT_EQ(offsetof(Nvos21, status), 28u);
  EXPECT_EQ(sizeof(Nvos00), 16u);
  EXPECT_EQ(sizeof(Nvos54), 32u);
  EXPECT_EQ(offsetof(Nvos54, params), 16u);
  EXPECT_EQ(offsetof(Nvos54, status), 28u);
  EXPECT_EQ(sizeof(Nvos33), 48u);
  EXPECT_EQ(offsetof(Nvos33, pLinearAddress), 32u);
  EXPECT_EQ(offsetof(Nvos33, flags), 44u);
  EXPECT_EQ(sizeof(Nvos33WithFd), 56u);
  EXPECT_EQ(sizeof(Nvos34), 32u);
  EXPECT_EQ(sizeof(Nvos46), 64u);
  EXPECT_EQ(offsetof(Nvos46, dmaOffset), 48u);
  EXPECT_EQ(offsetof(Nvos46, kindOverride), 40u);
  EXPECT_EQ(sizeof(Nvos47), 48u);
  EXPECT_EQ(offsetof(Nvos47, size), 32u);
  EXPECT_EQ(sizeof(Nvos02), 48u);
  EXPECT_EQ(offsetof(Nvos02, limit), 32u);
  EXPECT_EQ(sizeof(Nvos02WithFd), 56u);
  EXPECT_EQ(sizeof(Nv0080AllocParams), 56u);
  EXPECT_EQ(offsetof(Nv0080AllocParams, vaMode), 48u);
  EXPECT_EQ(sizeof(NvMemoryVirtualAllocParams), 24u);
  EXPECT_EQ(sizeof(NvMemoryAllocationParams), 128u);
  EXPECT_EQ(offsetof(NvMemoryAllocationParams, size), 64u);
  EXPECT_EQ(offsetof(NvMemoryAllocationParams, hVASpace), 108u);
  EXPECT_EQ(offsetof(NvMemoryAllocationParams, numaNode), 120u);
  EXPECT_EQ(sizeof(NvVaspaceAllocationParams), 56u);
  EXPECT_EQ(offsetof(NvVaspaceAllocationParams, vaBase), 40u);
  EXPECT_EQ(offsetof(NvVaspaceAllocationParams, bigPageSize), 32u);
  EXPECT_EQ(sizeof(NvChannelGroupAllocationParams), 20u);
  EXPECT_EQ(sizeof(NvCtxshareAllocationParams), 12u);
  EXPECT_EQ(sizeof(NvChannelAllocParams), 368u);
  EXPECT_EQ(offsetof(NvChannelAllocParams, hUserdMemory), 32u);
  EXPECT_EQ(offsetof(NvChannelAllocParams, userdOffset), 64u);
  EXPECT_EQ(offsetof(NvChannelAllocParams, engineType), 128u);
  EXPECT_EQ(offsetof(NvChannelAllocParams, errorNotifierMem), 248u);
  EXPECT_EQ(offsetof(NvChannelAllocParams, tpcConfigID), 360u);
  EXPECT_EQ(sizeof(Nv83deAllocParams), 12u);
  EXPECT_EQ(sizeof(NvNotification), 16u);
  EXPECT_EQ(offsetof(NvNotification, info32), 8u);
  EXPECT_EQ(offsetof(NvNotification, status), 14u);
  EXPECT_EQ(sizeof(Nv0000BuildVersionV2Params), 1032u);
  EXPECT_EQ(sizeof(Nv0000GpuIdInfoV2Params), 32u);
  EXPECT_EQ(sizeof(Nv0080ClassListV2Params), 804u);
  EXPECT_EQ(sizeof(Nv2080NameStringParams), 132u);
  EXPECT_EQ(sizeof(Nv2080GidInfoParams), 268u);
  EXPECT_EQ(sizeof(Nv2080GrGetInfoParams), 32u);
  EXPECT_EQ(offsetof(Nv2080GrGetInfoParams, grRouteInfo), 16u);
  EXPECT_EQ(sizeof(Nv2080FbGetInfoV2Params), 1028u);
  EXPECT_EQ(sizeof(Nvc36fWorkSubmitTokenParams), 4u);
  EXPECT_EQ(sizeof(Nva06cScheduleParams), 3u);
  EXPECT_EQ(sizeof(Nv83deSmErrorState), 48u);
  EXPECT_EQ(offsetof(Nv83deSmErrorState, hwwWarpEsrPc64), 32u);
  EXPECT_EQ(sizeof(Nv83deReadAllSmErrorStatesParams), 4824u);
  EXPECT_EQ(offsetof(Nv83deReadAllSmErrorStatesParams, mmuFault), 4812u);
  EXPECT_EQ(offsetof(Nv83deReadAllSmErrorStatesParams, startingSM), 4820u);
  EXPECT_EQ(sizeof(Nv83deClearAllSmErrorStatesParams), 8u);
  EXPECT_EQ(sizeof(Nv83deReadMmuFaultInfoParams), 72u);
  EXPECT_EQ(sizeof(UvmInitializeParams), 16u);
  EXPECT_EQ(sizeof(UvmMmInitializeParams), 8u);
  EXPECT_EQ(sizeof(UvmRegisterGpuParams), 40u);
  EXPECT_EQ(offsetof(UvmRegisterGpuParams, rmCtrlFd), 24u);
  EXPECT_EQ(offsetof(UvmRegisterGpuParams, rmStatus), 36u);
  EXPECT_EQ(sizeof(UvmUnregisterGpuParams), 20u);
  EXPECT_EQ(sizeof(UvmRegisterGpuVaspaceParams), 32u);
  EXPECT_EQ(sizeof(UvmUnregisterGpuVaspaceParams), 20u);
  EXPECT_EQ(sizeof(UvmRegisterChannelParams), 56u);
  EXPECT_EQ(sizeof(UvmCreateExternalRangeParams), 24u);
  EXPECT_EQ(sizeof(UvmMapExternalAllocationParams), 9264u);
  EXPECT_EQ(offsetof(UvmMapExternalAllocationParams, gpuAttributesCount), 9240u);
  EXPECT_EQ(offsetof(UvmMapExternalAllocationParams, hMemory), 9256u);
  EXPECT_EQ(sizeof(UvmFreeParams), 24u);
}

TEST(RmAbi, IoctlRequestsEncodeSizeAndNumber) {
  EXPECT_EQ(ioctl_request(NV_ESC_RM_ALLOC, sizeof(Nvos21)), 0xc020462bul);
  EXPECT_EQ(ioctl_request(NV_ESC_RM_CONTROL, sizeof(Nvos54)), 0xc020462aul);
  EXPECT_EQ(ioctl_request(NV_ESC_CARD_INFO, sizeof(NvCardInfo) * kMaxCards), 0xc90046c8ul);
}

TEST(RmAbi, UvmCommandNumbers) {
  EXPECT_EQ(UVM_INITIALIZE, 0x30000001ul);
  EXPECT_EQ(UVM_MAP_EXTERNAL_ALLOCATION, 33ul);
  EXPECT_EQ(UVM_CREATE_EXTERNAL_RANGE, 73ul);
  EXPECT_EQ(UVM_REGISTER_CHANNEL, 27ul);
  EXPECT_EQ(UVM_FREE, 34ul);
}

}  // namespace
}  // namespace nvhcq::drv::rm
