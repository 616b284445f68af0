// The nvgpu and nvmap structs and ioctl numbers of drv/tegra against the L4T
// r36 UAPI headers (nvgpu.h, nvgpu-ctrl.h, nvgpu-as.h from linux-nvgpu rel-36;
// nvmap.h from nvidia-oot), as measured by compiling those headers for arm64's
// and x86-64's LP64 layout. nvgpu dispatches on the whole request number, so a
// size that is off by one word makes an ioctl unknown (ENOTTY) on the Orin.

#include <gtest/gtest.h>

#include <cstddef>

#include "drv/tegra/nvgpu_abi.h"
#include "drv/tegra/nvmap_abi.h"

namespace nvhcq::drv::tegra {
namespace {

TEST(TegraAbi, CtrlStructsMatchTheHeaders) {
  EXPECT_EQ(sizeof(NvgpuGpuCharacteristics), 328u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, num_gpc), 12u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, num_tpc_per_gpc), 40u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, flags), 64u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, compute_class), 80u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, gpfifo_class), 84u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, dma_copy_class), 92u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, sm_arch_sm_version), 100u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, sm_arch_warp_count), 108u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, gpu_va_bit_count), 122u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, chipname), 160u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, per_device_identifier), 280u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, max_gpfifo_entries), 308u);
  EXPECT_EQ(offsetof(NvgpuGpuCharacteristics, device_instance_id), 320u);
  EXPECT_EQ(sizeof(NvgpuGpuGetCharacteristics), 16u);
  EXPECT_EQ(offsetof(NvgpuGpuGetTpcMasks, mask_buf_addr), 8u);
  EXPECT_EQ(sizeof(NvgpuGpuNumVsms), 8u);
  EXPECT_EQ(sizeof(NvgpuAllocAsArgs), 64u);
  EXPECT_EQ(offsetof(NvgpuAllocAsArgs, va_range_start), 16u);
  EXPECT_EQ(offsetof(NvgpuAllocAsArgs, va_range_split), 32u);
  EXPECT_EQ(sizeof(NvgpuGpuOpenTsgArgs), 24u);
  EXPECT_EQ(offsetof(NvgpuGpuOpenTsgArgs, share_token), 16u);
  EXPECT_EQ(sizeof(NvgpuGpuOpenChannelArgs), 4u);
}

TEST(TegraAbi, TsgChannelAndAsStructsMatchTheHeaders) {
  EXPECT_EQ(sizeof(NvgpuTsgBindChannelExArgs), 24u);
  EXPECT_EQ(offsetof(NvgpuTsgBindChannelExArgs, subcontext_id), 4u);
  EXPECT_EQ(offsetof(NvgpuTsgBindChannelExArgs, reserved), 8u);
  EXPECT_EQ(sizeof(NvgpuTsgCreateSubcontextArgs), 16u);
  EXPECT_EQ(offsetof(NvgpuTsgCreateSubcontextArgs, veid), 8u);
  EXPECT_EQ(sizeof(NvgpuTsgReadAllSmErrorStateArgs), 24u);
  EXPECT_EQ(sizeof(NvgpuTsgSmErrorStateRecord), 24u);
  EXPECT_EQ(offsetof(NvgpuTsgSmErrorStateRecord, warp_esr_pc), 8u);
  EXPECT_EQ(sizeof(NvgpuChannelSetupBindArgs), 104u);
  EXPECT_EQ(offsetof(NvgpuChannelSetupBindArgs, gpfifo_dmabuf_fd), 16u);
  EXPECT_EQ(offsetof(NvgpuChannelSetupBindArgs, work_submit_token), 20u);
  EXPECT_EQ(offsetof(NvgpuChannelSetupBindArgs, gpfifo_gpu_va), 40u);
  EXPECT_EQ(offsetof(NvgpuChannelSetupBindArgs, reserved), 64u);
  EXPECT_EQ(sizeof(NvgpuAllocObjCtxArgs), 16u);
  EXPECT_EQ(sizeof(NvgpuSetErrorNotifier), 24u);
  EXPECT_EQ(offsetof(NvgpuSetErrorNotifier, mem), 16u);
  EXPECT_EQ(sizeof(NvgpuNotification), 16u);
  EXPECT_EQ(offsetof(NvgpuNotification, info32), 8u);
  EXPECT_EQ(offsetof(NvgpuNotification, status), 14u);
  EXPECT_EQ(sizeof(NvgpuChannelWdtArgs), 8u);
  EXPECT_EQ(sizeof(NvgpuAsAllocSpaceArgs), 32u);
  EXPECT_EQ(offsetof(NvgpuAsAllocSpaceArgs, offset_or_align), 16u);
  EXPECT_EQ(offsetof(NvgpuAsAllocSpaceArgs, padding), 24u);
  EXPECT_EQ(sizeof(NvgpuAsFreeSpaceArgs), 32u);
  EXPECT_EQ(offsetof(NvgpuAsFreeSpaceArgs, page_size), 16u);
  EXPECT_EQ(sizeof(NvgpuAsMapBufferExArgs), 40u);
  EXPECT_EQ(offsetof(NvgpuAsMapBufferExArgs, compr_kind), 4u);
  EXPECT_EQ(offsetof(NvgpuAsMapBufferExArgs, incompr_kind), 6u);
  EXPECT_EQ(offsetof(NvgpuAsMapBufferExArgs, dmabuf_fd), 8u);
  EXPECT_EQ(offsetof(NvgpuAsMapBufferExArgs, offset), 32u);
  EXPECT_EQ(sizeof(NvgpuAsUnmapBufferArgs), 8u);
  EXPECT_EQ(sizeof(NvgpuAsBindChannelArgs), 4u);
}

TEST(TegraAbi, NvmapStructsMatchTheHeader) {
  EXPECT_EQ(sizeof(NvmapCreateHandle), 8u);
  EXPECT_EQ(offsetof(NvmapCreateHandle, handle), 4u);
  EXPECT_EQ(offsetof(NvmapCreateHandle, size64), 0u);
  EXPECT_EQ(offsetof(NvmapCreateHandle, handle64), 0u);
  EXPECT_EQ(sizeof(NvmapCreateHandleFromVa), 24u);
  EXPECT_EQ(offsetof(NvmapCreateHandleFromVa, flags), 12u);
  EXPECT_EQ(offsetof(NvmapCreateHandleFromVa, handle), 16u);
  EXPECT_EQ(sizeof(NvmapAllocHandle), 20u);
  EXPECT_EQ(offsetof(NvmapAllocHandle, numa_nid), 16u);
}

TEST(TegraAbi, RequestNumbersMatchTheHeaders) {
  EXPECT_EQ(NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, 0xc0104705ul);
  EXPECT_EQ(NVGPU_GPU_IOCTL_ALLOC_AS, 0xc0404708ul);
  EXPECT_EQ(NVGPU_GPU_IOCTL_OPEN_TSG, 0xc0184709ul);
  EXPECT_EQ(NVGPU_GPU_IOCTL_GET_TPC_MASKS, 0xc010470aul);
  EXPECT_EQ(NVGPU_GPU_IOCTL_OPEN_CHANNEL, 0xc004470bul);
  EXPECT_EQ(NVGPU_GPU_IOCTL_NUM_VSMS, 0xc0084712ul);
  EXPECT_EQ(NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, 0xc018540bul);
  EXPECT_EQ(NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES, 0xc0185411ul);
  EXPECT_EQ(NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, 0xc0105412ul);
  EXPECT_EQ(NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, 0xc010486cul);
  EXPECT_EQ(NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, 0xc018486ful);
  EXPECT_EQ(NVGPU_IOCTL_CHANNEL_WDT, 0x40084877ul);
  EXPECT_EQ(NVGPU_IOCTL_CHANNEL_SETUP_BIND, 0xc0684880ul);
  EXPECT_EQ(NVGPU_AS_IOCTL_BIND_CHANNEL, 0xc0044101ul);
  EXPECT_EQ(NVGPU_AS_IOCTL_FREE_SPACE, 0xc0204103ul);
  EXPECT_EQ(NVGPU_AS_IOCTL_UNMAP_BUFFER, 0xc0084105ul);
  EXPECT_EQ(NVGPU_AS_IOCTL_ALLOC_SPACE, 0xc0204106ul);
  EXPECT_EQ(NVGPU_AS_IOCTL_MAP_BUFFER_EX, 0xc0284107ul);
  EXPECT_EQ(NVMAP_IOC_CREATE, 0xc0084e00ul);
  EXPECT_EQ(NVMAP_IOC_CREATE_64, 0xc0084e01ul);
  EXPECT_EQ(NVMAP_IOC_ALLOC, 0x40144e03ul);
  EXPECT_EQ(NVMAP_IOC_FREE, 0x4e04ul);
  EXPECT_EQ(NVMAP_IOC_GET_FD, 0xc0084e0ful);
  EXPECT_EQ(NVMAP_IOC_FROM_VA, 0xc0184e16ul);
}

TEST(TegraAbi, RequestPartsComeBackOut) {
  unsigned long r = NVGPU_IOCTL_CHANNEL_SETUP_BIND;
  EXPECT_EQ(ioc_type(r), 'H');
  EXPECT_EQ(ioc_nr(r), 128u);
  EXPECT_EQ(ioc_size(r), sizeof(NvgpuChannelSetupBindArgs));
  EXPECT_EQ(ioc_dir(r), static_cast<uint32_t>(kIocRead | kIocWrite));
  EXPECT_EQ(ioc_dir(NVMAP_IOC_ALLOC), static_cast<uint32_t>(kIocWrite));
}

TEST(TegraAbi, NvmapTagLivesInTheUpperHalfOfTheFlags) {
  uint32_t flags = NVMAP_HANDLE_CACHEABLE | (kNvhcqNvmapTag << kNvmapTagShift);
  EXPECT_EQ(nvmap_tag_bits(flags), kNvhcqNvmapTag);
  EXPECT_EQ(flags & NVMAP_HANDLE_CACHE_FLAG, NVMAP_HANDLE_CACHEABLE);
  EXPECT_NE(kNvhcqNvmapTag, 0u);
  EXPECT_LT(kNvhcqNvmapTag, 1u << 16);
}

}  // namespace
}  // namespace nvhcq::drv::tegra
