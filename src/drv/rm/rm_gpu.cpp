#include "drv/rm/rm_gpu.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/error.h"
#include "base/log.h"
#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_client.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_params.h"

namespace nvhcq::drv::rm {
namespace {

// The GPU VA space RM gives the channel: [kVaBase, kVaBase + kVaSize).
constexpr uint64_t kVaBase = 0x1000;
constexpr uint64_t kVaSize = 0x1fffffb000000ull;
// GPU-only allocations come from [2^48, kGpuOnlyEnd): above any CPU user address.
constexpr uint64_t kGpuOnlyBase = 1ull << 48;
constexpr uint64_t kGpuOnlyEnd = 0x1f00000000000ull;
// CPU-visible allocations: a reserved window of the process's address space
// below 1 TiB, because pushbuffers (GPFIFO entries) and QMDs (SEND_PCAS_A,
// dependent-QMD pointers) can only be addressed with 40 bits.
constexpr uint64_t kCpuWindowSize = 1ull << 38;  // 256 GiB of PROT_NONE, no memory cost
constexpr uint64_t kCpuWindowLimit = 1ull << 40;
// The usermode MMIO page and its doorbell register (NVC361_NOTIFY_CHANNEL_PENDING).
constexpr uint64_t kUsermodeMmioSize = 0x10000;

std::string uuid_string(const NvUuid& u) {
  char s[64];
  const uint8_t* b = u.bytes;
  std::snprintf(s, sizeof(s),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

bool listed(const std::vector<uint32_t>& list, uint32_t cls) {
  return std::find(list.begin(), list.end(), cls) != list.end();
}

uint32_t first_listed(const std::vector<uint32_t>& list, std::initializer_list<uint32_t> wanted) {
  for (uint32_t c : wanted) {
    if (listed(list, c)) return c;
  }
  return 0;
}

}  // namespace

ClassChoice choose_classes(const std::vector<uint32_t>& list) {
  ClassChoice c;
  c.usermode = first_listed(
      list, {BLACKWELL_USERMODE_A, HOPPER_USERMODE_A, AMPERE_USERMODE_A, TURING_USERMODE_A});
  c.gpfifo = first_listed(list, {BLACKWELL_CHANNEL_GPFIFO_B, BLACKWELL_CHANNEL_GPFIFO_A,
                                 HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A});
  // Compute classes with a QMD layout in gpu/hw: Hopper (V04) and Ampere/Ada (V03).
  c.compute =
      first_listed(list, {HOPPER_COMPUTE_A, ADA_COMPUTE_A, AMPERE_COMPUTE_B, AMPERE_COMPUTE_A});
  c.dma = first_listed(list, {BLACKWELL_DMA_COPY_B, BLACKWELL_DMA_COPY_A, HOPPER_DMA_COPY_A,
                              AMPERE_DMA_COPY_B, AMPERE_DMA_COPY_A});
  std::string missing;
  if (c.usermode == 0) missing += " usermode (TURING_USERMODE_A or newer)";
  if (c.gpfifo == 0) missing += " GPFIFO channel (AMPERE_CHANNEL_GPFIFO_A or newer)";
  if (c.compute == 0) missing += " compute (AMPERE_COMPUTE_A .. HOPPER_COMPUTE_A)";
  if (c.dma == 0) missing += " copy engine (AMPERE_DMA_COPY_A or newer)";
  if (!missing.empty()) {
    throw Error("this GPU lists no class nvhcq can drive for:" + missing, "classlist", 0,
                "nvhcq supports Ampere, Ada and Hopper GPUs through RM");
  }
  return c;
}

int RmGpu::count() {
  if (!sys().exists("/dev/nvidiactl")) return 0;
  return static_cast<int>(RmClient::instance().cards().size());
}

RmGpu::RmGpu(int index, const RmGpuOptions& options) {
  open_device(index);
  query_info();
  setup_usermode();
  setup_vaspace();
  create_channels(options);
  log::info("opened ", info_.name, " (", info_.arch(), ") through RM ", info_.driver_version);
}

void RmGpu::open_device(int index) {
  RmClient& rm = RmClient::instance();
  auto cards = rm.cards();
  if (index < 0 || index >= static_cast<int>(cards.size())) {
    throw Error("no NVIDIA GPU with index " + std::to_string(index) + " (the driver lists " +
                std::to_string(cards.size()) + ")");
  }
  gpu_id_ = cards[index].gpu_id;
  minor_ = cards[index].minor_number;
  gpu_fd_ = rm.open_gpu_fd(minor_);

  Nv0000GpuIdInfoV2Params id{};
  id.gpuId = gpu_id_;
  rm.control(rm.root(), NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, id, "read the GPU's ids");

  Nv0080AllocParams dev{};
  dev.deviceId = id.deviceInstance;
  dev.hClientShare = rm.root();
  dev.vaMode = NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES;
  device_ = rm.alloc(rm.root(), NV01_DEVICE_0, dev, "allocate the device object");
  Nv2080AllocParams sub{};
  subdevice_ = rm.alloc(device_, NV20_SUBDEVICE_0, sub, "allocate the subdevice object");
  NvMemoryVirtualAllocParams virt{};
  virt.limit = 0x1ffffffffffffull;
  virtmem_ = rm.alloc(device_, NV01_MEMORY_VIRTUAL, virt, "allocate the virtual memory object");

  auto classes = std::make_unique<Nv0080ClassListV2Params>();
  rm.control(device_, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, *classes, "read the class list");
  uint32_t n = std::min<uint32_t>(classes->numClasses, kClassListMax);
  class_list_.assign(classes->classList, classes->classList + n);
  classes_ = choose_classes(class_list_);
}

void RmGpu::query_info() {
  RmClient& rm = RmClient::instance();
  info_.driver_version = rm.driver_version();
  info_.compute_class = classes_.compute;
  info_.dma_class = classes_.dma;
  info_.gpfifo_class = classes_.gpfifo;

  Nv2080NameStringParams name{};
  rm.control(subdevice_, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name, "read the GPU name");
  name.ascii[sizeof(name.ascii) - 1] = 0;
  info_.name = reinterpret_cast<const char*>(name.ascii);

  NvIndexData gr[] = {{NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS, 0},
                      {NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, 0},
                      {NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, 0},
                      {NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM, 0},
                      {NV2080_CTRL_GR_INFO_INDEX_SM_VERSION, 0}};
  Nv2080GrGetInfoParams gr_params{};
  gr_params.grInfoListSize = 5;
  gr_params.grInfoList = reinterpret_cast<uint64_t>(gr);
  rm.control(subdevice_, NV2080_CTRL_CMD_GR_GET_INFO, gr_params, "read the GR engine info");
  info_.num_gpcs = gr[0].data;
  info_.tpc_per_gpc = gr[1].data;
  info_.sm_per_tpc = gr[2].data;
  info_.max_warps_per_sm = gr[3].data;
  info_.sm_version = gr[4].data;
  // The LITTER values are the chip's maximum; floorswept parts enable fewer TPCs.
  for (uint32_t gpc = 0; gpc < info_.num_gpcs; ++gpc) {
    Nv2080GrGetTpcMaskParams mask{};
    mask.gpcId = gpc;
    rm.control(subdevice_, NV2080_CTRL_CMD_GR_GET_TPC_MASK, mask, "read a GPC's TPC mask");
    info_.tpc_count += static_cast<uint32_t>(__builtin_popcount(mask.tpcMask));
  }

  Nv2080GidInfoParams gid{};
  gid.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
  gid.length = 16;
  rm.control(subdevice_, NV2080_CTRL_CMD_GPU_GET_GID_INFO, gid, "read the GPU UUID");
  std::memcpy(uuid_.bytes, gid.data, 16);
  info_.uuid = uuid_string(uuid_);

  Nv2080FbGetInfoV2Params fb{};
  fb.fbInfoListSize = 1;
  fb.fbInfoList[0].index = NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE;
  rm.control(subdevice_, NV2080_CTRL_CMD_FB_GET_INFO_V2, fb, "read the memory size");
  info_.memory_bytes = static_cast<uint64_t>(fb.fbInfoList[0].data) << 10;
  info_.va_limit = kVaBase + kVaSize;
  info_.unified_memory = false;
}

void RmGpu::setup_usermode() {
  RmClient& rm = RmClient::instance();
  usermode_ = rm.alloc(subdevice_, classes_.usermode, "allocate the usermode doorbell object");
  void* where = sys().mmap(nullptr, kUsermodeMmioSize, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  check_errno(where != MAP_FAILED, "reserve address space for the doorbell page", "mmap");
  rm.map_to_cpu(device_, usermode_, kUsermodeMmioSize, where, 0, minor_, false);
  usermode_mmio_ = static_cast<volatile uint32_t*>(where);
}

void RmGpu::setup_vaspace() {
  RmClient& rm = RmClient::instance();
  NvVaspaceAllocationParams vas{};
  vas.vaBase = kVaBase;
  vas.vaSize = kVaSize;
  vas.flags = NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING |
              NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED;
  vaspace_ = rm.alloc(device_, FERMI_VASPACE_A, vas, "allocate the GPU VA space");

  uvm_.emplace();

  UvmRegisterGpuParams reg{};
  reg.gpu_uuid = uuid_;
  reg.rmCtrlFd = -1;
  uvm_->call(UVM_REGISTER_GPU, reg, "UVM_REGISTER_GPU");
  UvmRegisterGpuVaspaceParams regvas{};
  regvas.gpuUuid = uuid_;
  regvas.rmCtrlFd = rm.ctl_fd();
  regvas.hClient = rm.root();
  regvas.hVaSpace = vaspace_;
  uvm_->call(UVM_REGISTER_GPU_VASPACE, regvas, "UVM_REGISTER_GPU_VASPACE");

  void* window = MAP_FAILED;
  for (uint64_t base = 1ull << 36; base + kCpuWindowSize <= kCpuWindowLimit && window == MAP_FAILED;
       base += kCpuWindowSize / 4) {
    window = sys().mmap(reinterpret_cast<void*>(base), kCpuWindowSize, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  }
  check_errno(window != MAP_FAILED, "reserve address space below 1 TiB for CPU-visible GPU memory",
              "mmap");
  cpu_window_ = static_cast<uint8_t*>(window);
  cpu_window_size_ = kCpuWindowSize;
  cpu_va_.init(reinterpret_cast<uint64_t>(window), kCpuWindowSize);
  gpu_va_.init(kGpuOnlyBase, kGpuOnlyEnd - kGpuOnlyBase);
}

void RmGpu::reserve_va(uint64_t base, uint64_t size) {
  cpu_va_.reserve(base, size);
  gpu_va_.reserve(base, size);
}

RmGpu::~RmGpu() {
  RmClient& rm = RmClient::instance();
  // Channels first (they reference memory), then memory, then the object tree.
  for (Channel* ch : {&compute_, &copy_}) {
    if (ch->gpfifo == 0) continue;
    UvmUnregisterChannelParams un{};
    un.gpuUuid = uuid_;
    un.hClient = rm.root();
    un.hChannel = ch->gpfifo;
    try {
      uvm_->call(UVM_UNREGISTER_CHANNEL, un, "UVM_UNREGISTER_CHANNEL");
    } catch (const Error& e) {
      log::debug(e.what());
    }
  }
  if (debugger_ != 0) rm.free(device_, debugger_);
  if (channel_group_ != 0) rm.free(device_, channel_group_);  // frees channels, ctxshare
  std::vector<Allocation> remaining;
  {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    for (auto& [va, a] : live_) remaining.push_back(a);
  }
  for (auto& a : remaining) {
    try {
      free(a);
    } catch (const Error& e) {
      log::warn("while closing the GPU: ", e.what());
    }
  }
  if (notifier_ != 0) {
    if (notifier_cpu_ != nullptr) {
      sys().munmap(const_cast<NvNotification*>(notifier_cpu_), notifier_size_);
    }
    rm.free(device_, notifier_);
  }
  try {
    UvmUnregisterGpuVaspaceParams unvas{};
    unvas.gpuUuid = uuid_;
    uvm_->call(UVM_UNREGISTER_GPU_VASPACE, unvas, "UVM_UNREGISTER_GPU_VASPACE");
    UvmUnregisterGpuParams ungpu{};
    ungpu.gpu_uuid = uuid_;
    uvm_->call(UVM_UNREGISTER_GPU, ungpu, "UVM_UNREGISTER_GPU");
  } catch (const Error& e) {
    log::debug(e.what());
  }
  if (usermode_mmio_ != nullptr) {
    sys().munmap(const_cast<uint32_t*>(usermode_mmio_), kUsermodeMmioSize);
  }
  if (cpu_window_ != nullptr) sys().munmap(cpu_window_, cpu_window_size_);
  rm.free(rm.root(), device_);  // frees the subdevice, usermode, VA space, virtmem
}

}  // namespace nvhcq::drv::rm
