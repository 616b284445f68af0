// The Jetson driver interface (drv/tegra) against the simulated nvgpu + nvmap,
// and the simulated kernel's own checks of each ioctl (what the L4T r36 kernel
// refuses, it refuses, with the same errno).

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "app/commands.h"
#include "base/error.h"
#include "drv/probe.h"
#include "drv/tegra/nvgpu_abi.h"
#include "drv/tegra/nvmap_abi.h"
#include "drv/tegra/tegra_gpu.h"
#include "sim/sim_backends.h"
#include "sim/sim_tegra.h"

namespace nvhcq::sim {
namespace {

using namespace drv::tegra;  // NOLINT: these tests speak the ABI

// Raw ioctls on the simulated nodes, as the kernel sees them.
class TegraIoctl : public ::testing::Test {
 protected:
  void SetUp() override {
    ctrl = drv::sys().open(TegraFrontEnd::kCtrlPath, 0);
    nvmap = drv::sys().open(TegraFrontEnd::kNvmapPath, 0);
    ASSERT_GE(ctrl, 0);
    ASSERT_GE(nvmap, 0);
  }
  void TearDown() override {
    for (int fd : {channel, tsg, as, nvmap, ctrl}) {
      if (fd >= 0) drv::sys().close(fd);
    }
  }
  int call(int fd, unsigned long req, void* arg) {
    errno = 0;
    return drv::sys().ioctl(fd, req, arg) == 0 ? 0 : errno;
  }
  int alloc_as() {
    NvgpuAllocAsArgs a{};
    a.va_range_start = 2 << 20;
    a.va_range_end = (1ull << 40) - (2 << 20);
    a.flags = NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA;
    EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &a), 0);
    return a.as_fd;
  }
  uint32_t nvmap_handle(uint64_t size, uint32_t flags) {
    NvmapCreateHandle c{};
    c.size64 = size;
    EXPECT_EQ(call(nvmap, NVMAP_IOC_CREATE_64, &c), 0);
    NvmapAllocHandle a{c.handle64, NVMAP_HEAP_IOVMM, flags, 4096, -1};
    EXPECT_EQ(call(nvmap, NVMAP_IOC_ALLOC, &a), 0);
    return c.handle64;
  }
  int dmabuf(uint32_t handle) {
    NvmapCreateHandle g{};
    g.handle = handle;
    EXPECT_EQ(call(nvmap, NVMAP_IOC_GET_FD, &g), 0);
    return g.fd;
  }
  int ctrl = -1, nvmap = -1, as = -1, tsg = -1, channel = -1;
  static constexpr uint32_t kTagged = NVMAP_HANDLE_CACHEABLE | (0x0901u << 16);
};

TEST_F(TegraIoctl, WrongStructSizeIsNotTheSameIoctl) {
  NvgpuGpuCharacteristics c{};
  NvgpuGpuGetCharacteristics g{sizeof(c), reinterpret_cast<uint64_t>(&c)};
  EXPECT_EQ(call(ctrl, ioc(kIocRead | kIocWrite, kCtrlMagic, 5, 24), &g), ENOTTY);
  EXPECT_EQ(call(ctrl, ioc(kIocRead | kIocWrite, 'Q', 5, 16), &g), EINVAL) << "wrong magic";
  EXPECT_EQ(call(ctrl, ioc(kIocRead | kIocWrite, kCtrlMagic, 200, 16), &g), EINVAL)
      << "number past the last";
  EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, &g), 0);
  EXPECT_EQ(c.sm_arch_sm_version, 0x807u);
  EXPECT_EQ(c.compute_class, 0xc7c0u);
  EXPECT_EQ(c.gpu_va_bit_count, 40);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(c.chipname), 5), "ga10b");
  EXPECT_EQ(g.gpu_characteristics_buf_size, sizeof(c));
}

TEST_F(TegraIoctl, AllocAsWantsPdeAlignedRangeAndNoBigPages) {
  NvgpuAllocAsArgs a{};
  a.va_range_start = 2 << 20;
  a.va_range_end = (1ull << 40) - (2 << 20);
  a.big_page_size = 64 << 10;
  EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &a), EINVAL);
  a.big_page_size = 0;
  a.va_range_start = 0;
  EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &a), EINVAL) << "a zero start";
  a.va_range_start = 4096;
  EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &a), EINVAL) << "not PDE aligned";
  a.va_range_start = 2 << 20;
  a.va_range_split = 1ull << 32;
  EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &a), EINVAL) << "a split without big pages";
  a.va_range_split = 0;
  EXPECT_EQ(call(ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &a), 0);
  as = a.as_fd;
}

TEST_F(TegraIoctl, NvmapRefusesUntaggedAndSysmemAllocations) {
  NvmapCreateHandle c{};
  c.size64 = 1 << 20;
  ASSERT_EQ(call(nvmap, NVMAP_IOC_CREATE_64, &c), 0);
  NvmapAllocHandle a{c.handle64, NVMAP_HEAP_IOVMM, NVMAP_HANDLE_CACHEABLE, 4096, -1};
  EXPECT_EQ(call(nvmap, NVMAP_IOC_ALLOC, &a), EINVAL) << "no tag in flags[31:16]";
  EXPECT_GE(machine().log().count("without an allocation tag"), 1u);
  a.flags = kTagged;
  a.heap_mask = 1u << 31;
  EXPECT_EQ(call(nvmap, NVMAP_IOC_ALLOC, &a), EINVAL) << "the SYSMEM heap";
  a.heap_mask = NVMAP_HEAP_IOVMM;
  a.align = 3000;
  EXPECT_EQ(call(nvmap, NVMAP_IOC_ALLOC, &a), EINVAL) << "alignment not a power of two";
  a.align = 4096;
  EXPECT_EQ(call(nvmap, NVMAP_IOC_ALLOC, &a), 0);
  EXPECT_EQ(call(nvmap, NVMAP_IOC_ALLOC, &a), EEXIST);
  // The nvmap node itself is not what gets mapped: its dma-buf is.
  EXPECT_EQ(drv::sys().mmap(nullptr, 4096, PROT_READ, MAP_SHARED, nvmap, 0), MAP_FAILED);
  int fd = dmabuf(c.handle64);
  void* p = drv::sys().mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  static_cast<uint32_t*>(p)[7] = 77;
  drv::sys().munmap(p, 1 << 20);
  drv::sys().close(fd);
  EXPECT_EQ(
      call(nvmap, NVMAP_IOC_FREE, reinterpret_cast<void*>(static_cast<uintptr_t>(c.handle64))), 0);
  EXPECT_EQ(
      call(nvmap, NVMAP_IOC_FREE, reinterpret_cast<void*>(static_cast<uintptr_t>(c.handle64))),
      EINVAL);
}

TEST_F(TegraIoctl, ChannelSetupFollowsTheKernelsOrder) {
  as = alloc_as();
  NvgpuGpuOpenTsgArgs t{};
  ASSERT_EQ(call(ctrl, NVGPU_GPU_IOCTL_OPEN_TSG, &t), 0);
  tsg = static_cast<int>(t.tsg_fd);
  NvgpuTsgCreateSubcontextArgs sub{NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC, as, 0, 0};
  ASSERT_EQ(call(tsg, NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, &sub), 0);
  EXPECT_EQ(sub.veid, 1u);
  NvgpuGpuOpenChannelArgs open{kGraphicsRunlist};
  ASSERT_EQ(call(ctrl, NVGPU_GPU_IOCTL_OPEN_CHANNEL, &open), 0);
  channel = open.runlist_id_or_channel_fd;

  NvgpuTsgBindChannelExArgs bind{channel, sub.veid, {}};
  EXPECT_EQ(call(tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &bind), EINVAL) << "TSG bind before AS bind";
  NvgpuAsBindChannelArgs bind_as{static_cast<uint32_t>(channel)};
  ASSERT_EQ(call(as, NVGPU_AS_IOCTL_BIND_CHANNEL, &bind_as), 0);
  bind.reserved[3] = 1;
  EXPECT_EQ(call(tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &bind), EINVAL) << "nonzero reserved bytes";
  bind.reserved[3] = 0;
  ASSERT_EQ(call(tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &bind), 0);

  int ring = dmabuf(nvmap_handle(8192, kTagged)), userd = dmabuf(nvmap_handle(4096, kTagged));
  NvgpuChannelSetupBindArgs sb{};
  sb.num_gpfifo_entries = 1024;
  sb.flags = NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT;
  sb.gpfifo_dmabuf_fd = ring;
  sb.userd_dmabuf_fd = userd;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb), EINVAL)
      << "usermode needs deterministic";
  sb.flags |= NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb), EINVAL)
      << "the watchdog is still on";
  NvgpuChannelWdtArgs wdt{NVGPU_IOCTL_CHANNEL_DISABLE_WDT, 0};
  ASSERT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_WDT, &wdt), 0);
  sb.num_gpfifo_entries = 1000;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb), EINVAL) << "not a power of two";
  sb.num_gpfifo_entries = 2048;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb), EINVAL) << "ring buffer too small";
  sb.num_gpfifo_entries = 1024;
  ASSERT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb), 0);
  EXPECT_NE(sb.work_submit_token, 0u);
  EXPECT_NE(sb.gpfifo_gpu_va, 0u) << "the kernel maps the ring into the channel's VM";
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb), EEXIST);
  wdt.wdt_status = NVGPU_IOCTL_CHANNEL_ENABLE_WDT;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_WDT, &wdt), EINVAL)
      << "deterministic channels keep it off";

  NvgpuAllocObjCtxArgs obj{0xc6c0, 0, 0};
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &obj), EINVAL) << "not ga10b's class";
  obj.class_num = 0xc7c0;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &obj), 0);
  NvgpuSetErrorNotifier en{4090, 16, static_cast<uint32_t>(userd), 0};
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, &en), EINVAL)
      << "past the buffer";
  en.offset = 64;
  EXPECT_EQ(call(channel, NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, &en), 0);
  drv::sys().close(ring);
  drv::sys().close(userd);
}

TEST_F(TegraIoctl, AddressSpaceKeepsReservationsAndFixedMappingsApart) {
  as = alloc_as();
  NvgpuAsAllocSpaceArgs s{};
  s.pages = 256;
  s.page_size = 64 << 10;
  s.flags = NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET;
  s.offset_or_align = 0xFE00000000ull;
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_ALLOC_SPACE, &s), EINVAL) << "big pages are off";
  s.page_size = 4096;
  s.pages = (1ull << 30) / 4096;
  ASSERT_EQ(call(as, NVGPU_AS_IOCTL_ALLOC_SPACE, &s), 0);
  s.offset_or_align = 0xFE00000000ull + (512 << 20);
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_ALLOC_SPACE, &s), ENOMEM) << "overlapping reservations";

  int buf = dmabuf(nvmap_handle(1 << 20, kTagged));
  NvgpuAsMapBufferExArgs m{};
  m.compr_kind = NV_KIND_INVALID;
  m.incompr_kind = NV_KIND_INVALID;
  m.dmabuf_fd = static_cast<uint32_t>(buf);
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m), EINVAL) << "no kind at all";
  m.incompr_kind = kKindPitch;
  m.flags = NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET;
  m.offset = 0x8000000000ull;
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m), EINVAL) << "fixed, outside any reservation";
  m.offset = 0xFE00000000ull + (1 << 20);
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m), 0) << "fixed, inside the reservation";
  m.flags = 0;
  m.offset = 0;
  ASSERT_EQ(call(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m), 0);
  EXPECT_GT(m.offset, 0xFF00000000ull) << "the kernel's allocator works from the top down";
  NvgpuAsUnmapBufferArgs u{m.offset};
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_UNMAP_BUFFER, &u), 0);
  EXPECT_TRUE(machine().log().violations().empty());
  EXPECT_EQ(call(as, NVGPU_AS_IOCTL_UNMAP_BUFFER, &u), 0);
  EXPECT_EQ(machine().log().violations().size(), 1u) << "a second unmap is a driver bug";
  machine().log().clear();
  drv::sys().close(buf);
}

TEST_F(TegraIoctl, UsermodeRegionIsMappedOncePerCtrlFd) {
  void* p = drv::sys().mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctrl, 0);
  ASSERT_NE(p, MAP_FAILED);
  errno = 0;
  EXPECT_EQ(drv::sys().mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctrl, 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EBUSY);
  drv::sys().munmap(p, 4096);
}

// The driver interface on the simulated Orin.
TEST(TegraGpu, DescribesTheOrinFromItsCharacteristics) {
  if (!sim_unavailable().empty()) GTEST_SKIP() << sim_unavailable();
  drv::tegra::TegraGpu gpu;
  const auto& i = gpu.info();
  EXPECT_EQ(i.sm_version, 0x807u);
  EXPECT_EQ(i.arch(), "sm_87");
  EXPECT_EQ(i.compute_class, 0xc7c0u);
  EXPECT_EQ(i.dma_class, 0xc7b5u);
  EXPECT_EQ(i.num_gpcs, 2u);
  EXPECT_EQ(i.tpc_per_gpc, 4u);
  EXPECT_EQ(i.sm_per_tpc, 2u) << "from NUM_VSMS, not a guess";
  EXPECT_EQ(i.sm_count(), 16u);
  EXPECT_EQ(i.max_warps_per_sm, 48u);
  EXPECT_EQ(i.va_limit, 1ull << 40);
  EXPECT_TRUE(i.unified_memory);
  EXPECT_EQ(i.memory_bytes, 0u);
  EXPECT_NE(i.driver_version.find("R36.4"), std::string::npos) << i.driver_version;
  EXPECT_EQ(gpu.va_start(), 2u << 20);
  EXPECT_EQ(gpu.va_end(), (1ull << 40) - (2 << 20));
}

TEST(TegraGpu, ReservationsMustComeBeforeAllocationsThere) {
  drv::tegra::TegraGpu gpu;
  drv::MemFlags flags;
  drv::Allocation a = gpu.alloc(1 << 20, flags);
  EXPECT_NE(a.cpu, nullptr) << "unified memory: every allocation is CPU-mapped";
  EXPECT_THROW(gpu.reserve_va(a.gpu_va & ~0xfffull, 1 << 20), Error);
  EXPECT_THROW(gpu.reserve_va(1ull << 40, 4096), Error) << "outside the address space";
  drv::Allocation copy = a;
  gpu.free(a);
  EXPECT_FALSE(a.valid());
  EXPECT_THROW(gpu.free(copy), Error) << "freeing twice";
}

TEST(TegraGpu, DeviceOpenPicksTegraOnAJetson) {
  if (!sim_unavailable().empty()) GTEST_SKIP() << sim_unavailable();
  machine().set_present(false, true);
  EXPECT_FALSE(drv::probe_driver_nodes().has_rm());
  EXPECT_TRUE(drv::probe_driver_nodes().has_tegra());
  auto dev = gpu::Device::open(0);
  EXPECT_TRUE(dev->info().unified_memory);
  EXPECT_EQ(dev->info().sm_version, 0x807u);
  EXPECT_THROW(gpu::Device::open(1), Error) << "a Jetson has one GPU";
}

TEST(TegraGpu, OpensAreClosedCleanly) {
  size_t before = machine().open_fds();
  {
    auto dev = open_sim_tegra();
    gpu::Buffer b = dev->alloc(1 << 16);
  }
  EXPECT_EQ(machine().open_fds(), before) << "fds leaked by a device open/close";
}

// `nvhcq info` on a Jetson: the iGPU, found and opened through nvgpu.
TEST(TegraGpu, InfoCommandDescribesTheJetsonGpu) {
  machine().set_present(false, true);
  ::testing::internal::CaptureStdout();
  int rc = app::run_info({});
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("/dev/nvgpu/igpu0/ctrl present"), std::string::npos) << out;
  EXPECT_NE(
      out.find("Jetson iGPU ga10b, sm_87 (SM version 0x807), 16 SMs (of 2 GPCs x 4 TPCs x 2 SMs)"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("40-bit GPU VA"), std::string::npos) << out;
}

}  // namespace
}  // namespace nvhcq::sim
