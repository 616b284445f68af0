// The simulated RM GPU: what nvidia.ko and nvidia-uvm.ko refuse, it refuses
// (escape sizes, parameter sizes, parents, classes, UVM ranges), and nvhcq's RM
// driver reads the GPU it describes.

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

#include "base/error.h"
#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_client.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_gpu.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/rm_status.h"
#include "drv/rm/uvm_abi.h"
#include "sim/sim_backends.h"
#include "sim/sim_rm.h"

namespace nvhcq::sim {
namespace {

using namespace drv::rm;  // NOLINT: these tests speak the ABI

class RmEscapes : public ::testing::Test {
 protected:
  void SetUp() override {
    ctl = drv::sys().open(RmFrontEnd::kCtlPath, O_RDWR);
    ASSERT_GE(ctl, 0);
    Nvos21 root{};
    root.hClass = NV01_ROOT_CLIENT;
    ASSERT_EQ(drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_ALLOC, sizeof(root)), &root), 0);
    ASSERT_EQ(root.status, NV_OK);
    client = root.hObjectNew;
  }
  void TearDown() override {
    Nvos00 f{client, 0, client, 0};
    drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_FREE, sizeof(f)), &f);
    drv::sys().close(ctl);
  }
  uint32_t alloc(NvHandle parent, uint32_t cls, void* params, uint32_t size,
                 NvHandle* out = nullptr) {
    Nvos21 a{};
    a.hRoot = client;
    a.hObjectParent = parent;
    a.hClass = cls;
    a.pAllocParms = reinterpret_cast<uint64_t>(params);
    a.paramsSize = size;
    EXPECT_EQ(drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_ALLOC, sizeof(a)), &a), 0);
    if (out != nullptr) *out = a.hObjectNew;
    return a.status;
  }
  uint32_t control(NvHandle obj, uint32_t cmd, void* params, uint32_t size) {
    Nvos54 c{};
    c.hClient = client;
    c.hObject = obj;
    c.cmd = cmd;
    c.params = reinterpret_cast<uint64_t>(params);
    c.paramsSize = size;
    EXPECT_EQ(drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_CONTROL, sizeof(c)), &c), 0);
    return c.status;
  }
  NvHandle device() {
    Nv0080AllocParams d{};
    NvHandle h = 0;
    EXPECT_EQ(alloc(client, NV01_DEVICE_0, &d, sizeof(d), &h), NV_OK);
    return h;
  }
  int ctl = -1;
  NvHandle client = 0;
};

TEST_F(RmEscapes, AnEscapeOfTheWrongSizeIsRefused) {
  Nvos21 a{};
  a.hClass = NV01_ROOT_CLIENT;
  errno = 0;
  EXPECT_EQ(drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_ALLOC, sizeof(a) + 8), &a), -1);
  EXPECT_EQ(errno, EINVAL);
  Nvos54 c{};
  EXPECT_EQ(drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_CONTROL, 24), &c), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(RmEscapes, AllocationsCheckClassParentAndParameterSize) {
  Nv0080AllocParams d{};
  EXPECT_EQ(alloc(client, NV01_DEVICE_0, &d, sizeof(d) - 8), 0x1fu) << "short parameters";
  NvHandle dev = device();
  Nv2080AllocParams s{};
  NvHandle sub = 0;
  EXPECT_EQ(alloc(client, NV20_SUBDEVICE_0, &s, sizeof(s)), 0x36u)
      << "a subdevice under the client";
  EXPECT_EQ(alloc(dev, NV20_SUBDEVICE_0, &s, sizeof(s), &sub), NV_OK);
  EXPECT_EQ(alloc(sub, AMPERE_COMPUTE_B, nullptr, 0), 0x22u) << "not a class of this Hopper";
  EXPECT_EQ(alloc(sub, HOPPER_USERMODE_A, nullptr, 0), NV_OK);
  NvMemoryAllocationParams m{};
  m.size = 1 << 20;
  m.alignment = 3 << 12;
  EXPECT_EQ(alloc(dev, NV01_MEMORY_LOCAL_USER, &m, sizeof(m)), 0x1fu)
      << "alignment not a power of two";
  m.alignment = 4096;
  EXPECT_EQ(alloc(dev, NV01_MEMORY_LOCAL_USER, &m, sizeof(m)), NV_OK);
  EXPECT_EQ(machine().rm().count_objects(NV01_MEMORY_LOCAL_USER), 1u);
  Nvos00 f{client, client, dev, 0};
  EXPECT_EQ(drv::sys().ioctl(ctl, ioctl_request(NV_ESC_RM_FREE, sizeof(f)), &f), 0);
  EXPECT_EQ(f.status, NV_OK);
  EXPECT_EQ(machine().rm().count_objects(NV01_MEMORY_LOCAL_USER), 0u)
      << "freeing a device frees its tree";
}

TEST_F(RmEscapes, ControlsCheckTheirObjectAndParameterSize) {
  NvHandle dev = device();
  Nv0080ClassListV2Params list{};
  EXPECT_EQ(control(dev, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &list, sizeof(list) - 4), 0x3au);
  EXPECT_EQ(control(client, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &list, sizeof(list)), 0x56u)
      << "a device control on the client";
  EXPECT_EQ(control(dev, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &list, sizeof(list)), NV_OK);
  EXPECT_GT(list.numClasses, 5u);
  EXPECT_EQ(control(0xdeadbeef, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &list, sizeof(list)), 0x33u);
}

TEST(RmUvm, ExternalRangesMustNotOverlapAndMappingsMustFitThem) {
  int uvm = drv::sys().open(RmFrontEnd::kUvmPath, O_RDWR);
  ASSERT_GE(uvm, 0);
  UvmCreateExternalRangeParams r{0x7f0000000000ull, 1 << 21, 0};
  ASSERT_EQ(drv::sys().ioctl(uvm, UVM_CREATE_EXTERNAL_RANGE, &r), 0);
  EXPECT_EQ(r.rmStatus, NV_OK);
  UvmCreateExternalRangeParams overlap{0x7f0000100000ull, 1 << 21, 0};
  drv::sys().ioctl(uvm, UVM_CREATE_EXTERNAL_RANGE, &overlap);
  EXPECT_EQ(overlap.rmStatus, 0x68u) << "NV_ERR_UVM_ADDRESS_IN_USE";
  UvmCreateExternalRangeParams unaligned{0x7f1000000100ull, 4096, 0};
  drv::sys().ioctl(uvm, UVM_CREATE_EXTERNAL_RANGE, &unaligned);
  EXPECT_EQ(unaligned.rmStatus, 0x1eu) << "NV_ERR_INVALID_ADDRESS";
  auto map = std::make_unique<UvmMapExternalAllocationParams>();
  map->base = 0x7f0000000000ull;
  map->length = 4 << 20;  // longer than the range
  map->gpuAttributesCount = 1;
  drv::sys().ioctl(uvm, UVM_MAP_EXTERNAL_ALLOCATION, map.get());
  EXPECT_EQ(map->rmStatus, 0x1eu);
  UvmFreeParams f{0x7f0000000000ull, 1 << 21, 0};
  drv::sys().ioctl(uvm, UVM_FREE, &f);
  EXPECT_EQ(f.rmStatus, NV_OK);
  drv::sys().ioctl(uvm, UVM_FREE, &f);
  EXPECT_EQ(f.rmStatus, 0x1eu) << "freed twice";
  drv::sys().close(uvm);
}

TEST(RmUvm, AGpuIsRegisteredOncePerVaSpace) {
  int a = drv::sys().open(RmFrontEnd::kUvmPath, O_RDWR);
  int b = drv::sys().open(RmFrontEnd::kUvmPath, O_RDWR);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  UvmRegisterGpuParams reg{};
  reg.gpu_uuid = machine().rm().uuid();
  reg.rmCtrlFd = -1;
  ASSERT_EQ(drv::sys().ioctl(a, UVM_REGISTER_GPU, &reg), 0);
  EXPECT_EQ(reg.rmStatus, NV_OK);
  ASSERT_EQ(drv::sys().ioctl(a, UVM_REGISTER_GPU, &reg), 0);
  EXPECT_EQ(reg.rmStatus, 0x26u) << "NV_ERR_INVALID_DEVICE: registered twice in one VA space";
  ASSERT_EQ(drv::sys().ioctl(b, UVM_REGISTER_GPU, &reg), 0);
  EXPECT_EQ(reg.rmStatus, NV_OK) << "another file is another VA space";
  UvmUnregisterGpuParams un{};
  un.gpu_uuid = reg.gpu_uuid;
  for (int fd : {a, b}) {
    ASSERT_EQ(drv::sys().ioctl(fd, UVM_UNREGISTER_GPU, &un), 0);
    EXPECT_EQ(un.rmStatus, NV_OK);
    drv::sys().close(fd);
  }
}

TEST(RmGpuOnSim, DescribesTheSimulatedHopper) {
  if (!sim_unavailable().empty()) GTEST_SKIP() << sim_unavailable();
  EXPECT_EQ(RmGpu::count(), 1);
  RmGpu gpu(0);
  const auto& i = gpu.info();
  EXPECT_EQ(i.sm_version, 0x900u);
  EXPECT_EQ(i.arch(), "sm_90");
  EXPECT_EQ(i.sm_count(), 132u);
  EXPECT_EQ(i.compute_class, HOPPER_COMPUTE_A);
  EXPECT_EQ(i.dma_class, HOPPER_DMA_COPY_A);
  EXPECT_EQ(i.memory_bytes, 80ull << 30);
  EXPECT_FALSE(i.unified_memory);
  EXPECT_EQ(i.driver_version, RmFrontEnd::kDriverVersion);
  EXPECT_EQ(i.uuid.rfind("GPU-5a170c9e-", 0), 0u) << i.uuid;
  EXPECT_THROW(RmGpu(1), Error);
}

TEST(RmGpuOnSim, ClosingTheGpuFreesItsObjects) {
  if (!sim_unavailable().empty()) GTEST_SKIP() << sim_unavailable();
  {
    auto dev = open_sim_rm();
    gpu::Buffer b = dev->alloc(1 << 20);
    EXPECT_EQ(machine().rm().count_objects(HOPPER_CHANNEL_GPFIFO_A), 2u);
  }
  EXPECT_EQ(machine().rm().count_objects(NV01_DEVICE_0), 0u);
  EXPECT_EQ(machine().rm().count_objects(NV01_MEMORY_LOCAL_USER), 0u);
  EXPECT_EQ(machine().engine().channel_count(), 0u);
}

}  // namespace
}  // namespace nvhcq::sim
