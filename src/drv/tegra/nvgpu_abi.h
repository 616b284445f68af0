#pragma once
// The ioctl ABI of nvgpu (the Jetson GPU driver) that nvhcq uses, written from
// the L4T r36 UAPI headers nvgpu.h, nvgpu-ctrl.h and nvgpu-as.h (linux-nvgpu,
// branch rel-36). nvgpu dispatches on the whole request number, size included:
// a struct of the wrong size is refused with ENOTTY, so every size below is
// static_assert'ed, and tests/tegra/ checks the key field offsets.
//
// The device nodes: /dev/nvgpu/igpu0/ctrl (magic 'G') hands out the address
// space fd ('A'), TSG fds ('T') and channel fds ('H').

#include <cstddef>
#include <cstdint>

namespace nvhcq::drv::tegra {

// Linux's _IOC encoding (asm-generic/ioctl.h, used by arm64 and x86-64).
enum IocDir : uint32_t { kIocNone = 0, kIocWrite = 1, kIocRead = 2 };
constexpr unsigned long ioc(uint32_t dir, char type, uint32_t nr, size_t size) {
  return (static_cast<unsigned long>(dir) << 30) |
         (static_cast<unsigned long>(size & 0x3fff) << 16) |
         (static_cast<unsigned long>(static_cast<uint8_t>(type)) << 8) | (nr & 0xff);
}
template <typename T>
constexpr unsigned long iowr(char type, uint32_t nr) {
  return ioc(kIocRead | kIocWrite, type, nr, sizeof(T));
}
template <typename T>
constexpr unsigned long iow(char type, uint32_t nr) {
  return ioc(kIocWrite, type, nr, sizeof(T));
}
template <typename T>
constexpr unsigned long ior(char type, uint32_t nr) {
  return ioc(kIocRead, type, nr, sizeof(T));
}
constexpr unsigned long io(char type, uint32_t nr) {
  return ioc(kIocNone, type, nr, 0);
}
// The parts of a request number, as the kernel's _IOC_* macros take them apart.
constexpr uint32_t ioc_dir(unsigned long req) {
  return static_cast<uint32_t>(req >> 30) & 3;
}
constexpr uint32_t ioc_size(unsigned long req) {
  return static_cast<uint32_t>(req >> 16) & 0x3fff;
}
constexpr char ioc_type(unsigned long req) {
  return static_cast<char>((req >> 8) & 0xff);
}
constexpr uint32_t ioc_nr(unsigned long req) {
  return static_cast<uint32_t>(req & 0xff);
}

constexpr char kCtrlMagic = 'G';
constexpr char kAsMagic = 'A';
constexpr char kTsgMagic = 'T';
constexpr char kChannelMagic = 'H';

// ---- ctrl (nvgpu-ctrl.h) ----

// nvgpu_gpu_characteristics: append-only; the kernel copies min(ours, its) bytes.
struct NvgpuGpuCharacteristics {
  uint32_t arch, impl, rev, num_gpc;
  int32_t numa_domain_id;
  alignas(8) uint64_t L2_cache_size;
  uint64_t on_board_video_memory_size;
  uint32_t num_tpc_per_gpc;  // the architectural maximum
  uint32_t bus_type;
  uint32_t big_page_size;
  uint32_t compression_page_size;
  uint32_t pde_coverage_bit_count;
  uint32_t available_big_page_sizes;
  uint64_t flags;
  uint32_t twod_class, threed_class, compute_class, gpfifo_class, inline_to_memory_class,
      dma_copy_class;
  uint32_t gpc_mask;
  uint32_t sm_arch_sm_version;  // 0x807 on Orin
  uint32_t sm_arch_spa_version;
  uint32_t sm_arch_warp_count;  // warps per SM
  int16_t gpu_ioctl_nr_last, tsg_ioctl_nr_last, dbg_gpu_ioctl_nr_last, ioctl_channel_nr_last,
      as_ioctl_nr_last;
  uint8_t gpu_va_bit_count;  // 40 on Orin
  uint8_t reserved;
  uint32_t max_fbps_count, fbp_en_mask, emc_en_mask, max_ltc_per_fbp, max_lts_per_ltc,
      max_tex_per_tpc, max_gpc_count;
  uint32_t rop_l2_en_mask_DEPRECATED[2];
  uint8_t chipname[8];  // "ga10b"
  uint64_t gr_compbit_store_base_hw;
  uint32_t gr_gobs_per_comptagline_per_slice, num_ltc, lts_per_ltc, cbc_cache_line_size,
      cbc_comptags_per_line;
  uint32_t map_buffer_batch_limit;
  uint64_t max_freq;
  uint32_t graphics_preemption_mode_flags, compute_preemption_mode_flags,
      default_graphics_preempt_mode, default_compute_preempt_mode;
  uint64_t local_video_memory_size;
  uint16_t pci_vendor_id, pci_device_id, pci_subsystem_vendor_id, pci_subsystem_device_id,
      pci_class;
  uint8_t pci_revision, vbios_oem_version;
  uint32_t vbios_version;
  uint32_t reg_ops_limit, reserved1;
  int16_t event_ioctl_nr_last;
  uint16_t pad;
  uint32_t max_css_buffer_size;
  int16_t ctxsw_ioctl_nr_last, prof_ioctl_nr_last, nvs_ioctl_nr_last;
  uint8_t reserved2[2];
  uint32_t max_ctxsw_ring_buffer_size, reserved3;
  uint64_t per_device_identifier;
  uint32_t num_ppc_per_gpc, max_veid_count_per_tsg;
  uint32_t num_sub_partition_per_fbpa, gpu_instance_id;
  uint32_t gr_instance_id;
  uint32_t max_gpfifo_entries;
  uint32_t max_dbg_tsg_timeslice, reserved5;
  uint64_t device_instance_id;
};
static_assert(sizeof(NvgpuGpuCharacteristics) == 328);
static_assert(offsetof(NvgpuGpuCharacteristics, flags) == 64);
static_assert(offsetof(NvgpuGpuCharacteristics, compute_class) == 80);
static_assert(offsetof(NvgpuGpuCharacteristics, dma_copy_class) == 92);
static_assert(offsetof(NvgpuGpuCharacteristics, sm_arch_sm_version) == 100);
static_assert(offsetof(NvgpuGpuCharacteristics, gpu_va_bit_count) == 122);
static_assert(offsetof(NvgpuGpuCharacteristics, chipname) == 160);
static_assert(offsetof(NvgpuGpuCharacteristics, max_gpfifo_entries) == 308);

// Characteristics flags nvhcq looks at.
constexpr uint64_t NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_OPTS = 1ull << 24;
constexpr uint64_t NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT = 1ull << 30;
constexpr uint64_t NVGPU_GPU_FLAGS_SUPPORT_COMPUTE = 1ull << 42;
constexpr uint32_t NVGPU_GPU_BUS_TYPE_AXI = 32;

struct NvgpuGpuGetCharacteristics {
  uint64_t gpu_characteristics_buf_size;  // in: our size; out: the kernel's
  uint64_t gpu_characteristics_buf_addr;  // pointer to NvgpuGpuCharacteristics
};
static_assert(sizeof(NvgpuGpuGetCharacteristics) == 16);

struct NvgpuGpuGetTpcMasks {
  uint32_t mask_buf_size;  // in: bytes at mask_buf_addr (4 per GPC); out: bytes needed
  uint32_t reserved;
  uint64_t mask_buf_addr;  // pointer to uint32_t[num_gpc]
};
static_assert(sizeof(NvgpuGpuGetTpcMasks) == 16);

struct NvgpuGpuNumVsms {
  uint32_t num_vsms;  // out: SMs
  uint32_t reserved;
};
static_assert(sizeof(NvgpuGpuNumVsms) == 8);

struct NvgpuAllocAsArgs {
  uint32_t big_page_size;  // 0: no big pages in this address space
  int32_t as_fd;           // out
  uint32_t flags;
  uint32_t reserved;        // must be zero
  uint64_t va_range_start;  // PDE-aligned (2 MiB on ga10b), nonzero
  uint64_t va_range_end;    // PDE-aligned
  uint64_t va_range_split;  // must be zero with UNIFIED_VA or without big pages
  uint32_t padding[6];
};
static_assert(sizeof(NvgpuAllocAsArgs) == 64);
static_assert(offsetof(NvgpuAllocAsArgs, va_range_start) == 16);
constexpr uint32_t NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA = 1u << 1;

struct NvgpuGpuOpenTsgArgs {
  uint32_t tsg_fd;  // out
  uint32_t flags;   // 0: a new TSG (no sharing)
  uint64_t source_device_instance_id;
  uint64_t share_token;
};
static_assert(sizeof(NvgpuGpuOpenTsgArgs) == 24);

// A union in the header: in.runlist_id on the way in, out.channel_fd on the way out.
struct NvgpuGpuOpenChannelArgs {
  int32_t runlist_id_or_channel_fd;
};
static_assert(sizeof(NvgpuGpuOpenChannelArgs) == 4);
constexpr int32_t kGraphicsRunlist = -1;  // the primary graphics (GR) runlist

constexpr unsigned long NVGPU_GPU_IOCTL_GET_CHARACTERISTICS =
    iowr<NvgpuGpuGetCharacteristics>(kCtrlMagic, 5);
constexpr unsigned long NVGPU_GPU_IOCTL_ALLOC_AS = iowr<NvgpuAllocAsArgs>(kCtrlMagic, 8);
constexpr unsigned long NVGPU_GPU_IOCTL_OPEN_TSG = iowr<NvgpuGpuOpenTsgArgs>(kCtrlMagic, 9);
constexpr unsigned long NVGPU_GPU_IOCTL_GET_TPC_MASKS = iowr<NvgpuGpuGetTpcMasks>(kCtrlMagic, 10);
constexpr unsigned long NVGPU_GPU_IOCTL_OPEN_CHANNEL =
    iowr<NvgpuGpuOpenChannelArgs>(kCtrlMagic, 11);
constexpr unsigned long NVGPU_GPU_IOCTL_NUM_VSMS = iowr<NvgpuGpuNumVsms>(kCtrlMagic, 18);
static_assert(NVGPU_GPU_IOCTL_GET_CHARACTERISTICS == 0xc0104705);
static_assert(NVGPU_GPU_IOCTL_ALLOC_AS == 0xc0404708);

// The ctrl node's mmap (offset 0, at most 64 KiB) is the usermode region; the
// doorbell register in it takes a channel's work-submit token.
constexpr uint64_t kUsermodeRegionBytes = 0x1000;
constexpr uint64_t kUsermodeDoorbellOffset = 0x90;

// ---- TSG (nvgpu.h) ----

struct NvgpuTsgBindChannelExArgs {
  int32_t channel_fd;
  uint32_t subcontext_id;  // the VEID from CREATE_SUBCONTEXT
  uint8_t reserved[16];
};
static_assert(sizeof(NvgpuTsgBindChannelExArgs) == 24);

struct NvgpuTsgCreateSubcontextArgs {
  uint32_t type;  // SYNC (0) or ASYNC (1)
  int32_t as_fd;
  uint32_t veid;  // out
  uint32_t reserved;
};
static_assert(sizeof(NvgpuTsgCreateSubcontextArgs) == 16);
constexpr uint32_t NVGPU_TSG_SUBCONTEXT_TYPE_SYNC = 0;
constexpr uint32_t NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC = 1;

struct NvgpuTsgSmErrorStateRecord {
  uint32_t global_esr, warp_esr;
  uint64_t warp_esr_pc;
  uint32_t global_esr_report_mask, warp_esr_report_mask;
};
static_assert(sizeof(NvgpuTsgSmErrorStateRecord) == 24);

struct NvgpuTsgReadAllSmErrorStateArgs {
  uint32_t num_sm;  // must equal the number of SMs
  uint32_t reserved;
  uint64_t buffer_mem;  // pointer to NvgpuTsgSmErrorStateRecord[num_sm]
  uint64_t buffer_size;
};
static_assert(sizeof(NvgpuTsgReadAllSmErrorStateArgs) == 24);

constexpr unsigned long NVGPU_TSG_IOCTL_BIND_CHANNEL_EX =
    iowr<NvgpuTsgBindChannelExArgs>(kTsgMagic, 11);
constexpr unsigned long NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES =
    iowr<NvgpuTsgReadAllSmErrorStateArgs>(kTsgMagic, 17);
constexpr unsigned long NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT =
    iowr<NvgpuTsgCreateSubcontextArgs>(kTsgMagic, 18);

// ---- channel (nvgpu.h) ----

struct NvgpuChannelWdtArgs {
  uint32_t wdt_status;
  uint32_t timeout_ms;
};
static_assert(sizeof(NvgpuChannelWdtArgs) == 8);
constexpr uint32_t NVGPU_IOCTL_CHANNEL_DISABLE_WDT = 1u << 0;
constexpr uint32_t NVGPU_IOCTL_CHANNEL_ENABLE_WDT = 1u << 1;

struct NvgpuChannelSetupBindArgs {
  uint32_t num_gpfifo_entries;  // power of two
  uint32_t num_inflight_jobs;
  uint32_t flags;
  int32_t userd_dmabuf_fd;
  int32_t gpfifo_dmabuf_fd;
  uint32_t work_submit_token;     // out: written to the doorbell
  uint64_t userd_dmabuf_offset;   // must be 0
  uint64_t gpfifo_dmabuf_offset;  // must be 0
  uint64_t gpfifo_gpu_va;         // out
  uint64_t userd_gpu_va;          // out
  uint64_t usermode_mmio_gpu_va;  // out
  uint32_t reserved[9];
};
static_assert(sizeof(NvgpuChannelSetupBindArgs) == 104);
static_assert(offsetof(NvgpuChannelSetupBindArgs, work_submit_token) == 20);
static_assert(offsetof(NvgpuChannelSetupBindArgs, gpfifo_gpu_va) == 40);
constexpr uint32_t NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC = 1u << 1;
constexpr uint32_t NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT = 1u << 3;

struct NvgpuAllocObjCtxArgs {
  uint32_t class_num;
  uint32_t flags;
  uint64_t obj_id;  // out
};
static_assert(sizeof(NvgpuAllocObjCtxArgs) == 16);

struct NvgpuSetErrorNotifier {
  uint64_t offset;  // of the notification in the buffer
  uint64_t size;
  uint32_t mem;  // dmabuf fd
  uint32_t padding;
};
static_assert(sizeof(NvgpuSetErrorNotifier) == 24);

// What the kernel writes to the error notifier when it recovers a channel.
struct NvgpuNotification {
  uint32_t time_stamp_ns[2];
  uint32_t info32;  // the error: one of the codes below
  uint16_t info16;
  uint16_t status;  // 0xffff once an error was reported
};
static_assert(sizeof(NvgpuNotification) == 16);
constexpr uint32_t NVGPU_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT = 8;
constexpr uint32_t NVGPU_CHANNEL_GR_EXCEPTION = 13;
constexpr uint32_t NVGPU_CHANNEL_GR_SEMAPHORE_TIMEOUT = 24;
constexpr uint32_t NVGPU_CHANNEL_GR_ILLEGAL_NOTIFY = 25;
constexpr uint32_t NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT = 31;
constexpr uint32_t NVGPU_CHANNEL_PBDMA_ERROR = 32;
constexpr uint32_t NVGPU_CHANNEL_RESETCHANNEL_VERIF_ERROR = 43;

constexpr unsigned long NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX =
    iowr<NvgpuAllocObjCtxArgs>(kChannelMagic, 108);
constexpr unsigned long NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER =
    iowr<NvgpuSetErrorNotifier>(kChannelMagic, 111);
constexpr unsigned long NVGPU_IOCTL_CHANNEL_WDT = iow<NvgpuChannelWdtArgs>(kChannelMagic, 119);
constexpr unsigned long NVGPU_IOCTL_CHANNEL_SETUP_BIND =
    iowr<NvgpuChannelSetupBindArgs>(kChannelMagic, 128);
static_assert(NVGPU_IOCTL_CHANNEL_SETUP_BIND == 0xc0684880);

// ---- address space (nvgpu-as.h) ----

struct NvgpuAsAllocSpaceArgs {
  uint64_t pages;
  uint32_t page_size;
  uint32_t flags;
  uint64_t offset_or_align;  // union o_a: the fixed offset with FIXED_OFFSET
  uint32_t padding[2];
};
static_assert(sizeof(NvgpuAsAllocSpaceArgs) == 32);
static_assert(offsetof(NvgpuAsAllocSpaceArgs, offset_or_align) == 16);
constexpr uint32_t NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET = 0x1;
constexpr uint32_t NVGPU_AS_ALLOC_SPACE_FLAGS_SPARSE = 0x2;

struct NvgpuAsFreeSpaceArgs {
  uint64_t offset;
  uint64_t pages;
  uint32_t page_size;
  uint32_t padding[3];
};
static_assert(sizeof(NvgpuAsFreeSpaceArgs) == 32);

struct NvgpuAsBindChannelArgs {
  uint32_t channel_fd;
};
static_assert(sizeof(NvgpuAsBindChannelArgs) == 4);

struct NvgpuAsMapBufferExArgs {
  uint32_t flags;
  int16_t compr_kind;    // NV_KIND_INVALID (-1): no compression
  int16_t incompr_kind;  // 0: pitch-linear
  uint32_t dmabuf_fd;
  uint32_t page_size;  // 0: best fit
  uint64_t buffer_offset;
  uint64_t mapping_size;  // 0: the whole buffer
  uint64_t offset;        // in with FIXED_OFFSET; out: the GPU VA
};
static_assert(sizeof(NvgpuAsMapBufferExArgs) == 40);
static_assert(offsetof(NvgpuAsMapBufferExArgs, dmabuf_fd) == 8);
static_assert(offsetof(NvgpuAsMapBufferExArgs, offset) == 32);
constexpr uint32_t NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET = 1u << 0;
constexpr uint32_t NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE = 1u << 2;
constexpr int16_t NV_KIND_INVALID = -1;
constexpr int16_t kKindPitch = 0;

struct NvgpuAsUnmapBufferArgs {
  uint64_t offset;
};
static_assert(sizeof(NvgpuAsUnmapBufferArgs) == 8);

constexpr unsigned long NVGPU_AS_IOCTL_BIND_CHANNEL = iowr<NvgpuAsBindChannelArgs>(kAsMagic, 1);
constexpr unsigned long NVGPU_AS_IOCTL_FREE_SPACE = iowr<NvgpuAsFreeSpaceArgs>(kAsMagic, 3);
constexpr unsigned long NVGPU_AS_IOCTL_UNMAP_BUFFER = iowr<NvgpuAsUnmapBufferArgs>(kAsMagic, 5);
constexpr unsigned long NVGPU_AS_IOCTL_ALLOC_SPACE = iowr<NvgpuAsAllocSpaceArgs>(kAsMagic, 6);
constexpr unsigned long NVGPU_AS_IOCTL_MAP_BUFFER_EX = iowr<NvgpuAsMapBufferExArgs>(kAsMagic, 7);
static_assert(NVGPU_AS_IOCTL_MAP_BUFFER_EX == 0xc0284107);

// USERD (the channel's user-visible control area): GP_GET and GP_PUT words, as on
// every Ampere+ channel (ram_userd_gp_get_w = 34, ram_userd_gp_put_w = 35).
constexpr uint64_t kUserdGpGetOffset = 0x88;
constexpr uint64_t kUserdGpPutOffset = 0x8c;

}  // namespace nvhcq::drv::tegra
