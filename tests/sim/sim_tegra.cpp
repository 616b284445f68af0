// The simulated Jetson's ctrl node, TSGs and channels.

#include "sim/sim_tegra.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

namespace nvhcq::sim {

using namespace drv::tegra;  // NOLINT: the ABI this file implements

namespace {

constexpr uint64_t kPdeBytes = 2ull << 20;
constexpr uint32_t kVaBits = 40;
constexpr uint32_t kGpfifoClass = 0xc76f;

template <typename T>
T* args(void* arg) {
  return static_cast<T*>(arg);
}

}  // namespace

int check_nvgpu_request(unsigned long request, char magic, uint32_t last_nr, uint32_t max_size) {
  if (ioc_type(request) != magic || ioc_nr(request) == 0 || ioc_nr(request) > last_nr ||
      ioc_size(request) > max_size) {
    return -EINVAL;
  }
  return 0;
}

TegraFrontEnd::TegraFrontEnd(SimMachine& machine) : machine_(machine) {
  spec_.sm_version = 0x807;
  spec_.compute_class = 0xc7c0;  // AMPERE_COMPUTE_B
  spec_.dma_class = 0xc7b5;      // AMPERE_DMA_COPY_B
  spec_.num_gpcs = 2;
  spec_.tpc_per_gpc = 4;
  spec_.sm_per_tpc = 2;
  spec_.max_warps_per_sm = 48;
  spec_.tpc_count = 8;
  spec_.require_cacheable_pushbuffers = true;
  // The usermode region of the ctrl node; its doorbell takes work-submit tokens.
  usermode_ = MemoryObject::create(64 << 10, "nvgpu usermode region");
  machine_.engine().add_doorbell(usermode_, kUsermodeDoorbellOffset);
}

std::vector<std::string> TegraFrontEnd::nodes() const {
  return {kCtrlPath, kNvmapPath};
}

std::map<std::string, std::string> TegraFrontEnd::files() const {
  return {{"/etc/nv_tegra_release",
           "# R36 (release), REVISION: 4.4, GCID: 00000000, BOARD: generic, EABI: aarch64, "
           "DATE: simulated\n"}};
}

NvgpuGpuCharacteristics TegraFrontEnd::characteristics() const {
  NvgpuGpuCharacteristics c{};
  c.arch = 0x170;
  c.impl = 0xb;
  c.rev = 0xa1;
  c.num_gpc = spec_.num_gpcs;
  c.numa_domain_id = -1;
  c.L2_cache_size = 4ull << 20;
  c.on_board_video_memory_size = 0;
  c.num_tpc_per_gpc = spec_.tpc_per_gpc;
  c.bus_type = NVGPU_GPU_BUS_TYPE_AXI;
  c.big_page_size = 0;
  c.pde_coverage_bit_count = 21;
  c.flags = NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT | NVGPU_GPU_FLAGS_SUPPORT_COMPUTE |
            NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_OPTS;
  c.compute_class = spec_.compute_class;
  c.gpfifo_class = kGpfifoClass;
  c.dma_copy_class = spec_.dma_class;
  c.gpc_mask = (1u << spec_.num_gpcs) - 1;
  c.sm_arch_sm_version = spec_.sm_version;
  c.sm_arch_spa_version = spec_.sm_version;
  c.sm_arch_warp_count = spec_.max_warps_per_sm;
  c.gpu_ioctl_nr_last = 44;
  c.tsg_ioctl_nr_last = 21;
  c.ioctl_channel_nr_last = 128;
  c.as_ioctl_nr_last = 14;
  c.gpu_va_bit_count = kVaBits;
  std::memcpy(c.chipname, "ga10b", 5);
  c.max_freq = 1300500000;
  c.per_device_identifier = 0x5149a7e5d0c0ffeeull;
  c.max_veid_count_per_tsg = 64;
  c.max_gpfifo_entries = 1u << 28;
  return c;
}

void TegraFrontEnd::record_alloc(const NvmapAllocRecord& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  allocs_.push_back(r);
}

std::vector<NvmapAllocRecord> TegraFrontEnd::allocs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocs_;
}

void TegraFrontEnd::note_address_space(std::shared_ptr<AddressSpace> as) {
  std::lock_guard<std::mutex> lock(mutex_);
  last_as_ = as;
}

std::shared_ptr<AddressSpace> TegraFrontEnd::last_address_space() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_as_.lock();
}

void TegraFrontEnd::clear_records() {
  std::lock_guard<std::mutex> lock(mutex_);
  allocs_.clear();
}

// ---- ctrl ----

namespace {

class CtrlFile final : public SimFile {
 public:
  explicit CtrlFile(TegraFrontEnd& fe) : fe_(fe) {}
  int ioctl(unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, off_t offset, int* err) override {
    // The usermode region: at most 64 KiB from offset 0, mapped once per open.
    if (mapped_) {
      *err = EBUSY;
      return MAP_FAILED;
    }
    if (length == 0 || length > (64 << 10) || offset != 0) {
      *err = EINVAL;
      return MAP_FAILED;
    }
    void* p = fe_.usermode_page()->map_for_cpu(addr, length, prot, flags, 0);
    if (p == MAP_FAILED) {
      *err = errno;
    } else {
      mapped_ = true;
    }
    return p;
  }

 private:
  TegraFrontEnd& fe_;
  bool mapped_ = false;
};

int CtrlFile::ioctl(unsigned long request, void* arg) {
  // The largest ctrl argument is GET_CPU_TIME_CORRELATION_INFO's.
  if (int rc = check_nvgpu_request(request, kCtrlMagic, 44, 0x1010); rc != 0) return rc;
  SimMachine& m = fe_.machine();
  switch (request) {
    case NVGPU_GPU_IOCTL_GET_CHARACTERISTICS: {
      auto* a = args<NvgpuGpuGetCharacteristics>(arg);
      NvgpuGpuCharacteristics c = fe_.characteristics();
      if (a->gpu_characteristics_buf_size > 0) {
        if (a->gpu_characteristics_buf_addr == 0) return -EFAULT;
        std::memcpy(reinterpret_cast<void*>(a->gpu_characteristics_buf_addr), &c,
                    std::min<uint64_t>(a->gpu_characteristics_buf_size, sizeof(c)));
      }
      a->gpu_characteristics_buf_size = sizeof(c);
      return 0;
    }
    case NVGPU_GPU_IOCTL_GET_TPC_MASKS: {
      auto* a = args<NvgpuGpuGetTpcMasks>(arg);
      uint32_t need = fe_.spec().num_gpcs * 4;
      if (a->mask_buf_size > 0) {
        if (a->mask_buf_size < need || a->mask_buf_addr == 0) return -EINVAL;
        auto* out = reinterpret_cast<uint32_t*>(a->mask_buf_addr);
        for (uint32_t g = 0; g < fe_.spec().num_gpcs; ++g)
          out[g] = (1u << fe_.spec().tpc_per_gpc) - 1;
      }
      a->mask_buf_size = need;
      return 0;
    }
    case NVGPU_GPU_IOCTL_NUM_VSMS:
      args<NvgpuGpuNumVsms>(arg)->num_vsms = TegraFrontEnd::kNumSms;
      return 0;
    case NVGPU_GPU_IOCTL_ALLOC_AS: {
      auto* a = args<NvgpuAllocAsArgs>(arg);
      uint64_t mask = kPdeBytes - 1;
      if (a->big_page_size != 0) return -EINVAL;  // ga10b offers no big pages here
      if ((a->flags & ~NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA) != 0 || a->reserved != 0)
        return -EINVAL;
      if (a->va_range_start == 0 || (a->va_range_start & mask) != 0 || a->va_range_end == 0 ||
          (a->va_range_end & mask) != 0 || a->va_range_start >= a->va_range_end ||
          a->va_range_end > (1ull << kVaBits) || a->va_range_split != 0) {
        return -EINVAL;
      }
      auto f = std::make_shared<AsFile>(fe_, a->va_range_start, a->va_range_end);
      fe_.note_address_space(f->space());
      a->as_fd = m.install(f, "anon_inode:nvhost-gpu-as");
      return 0;
    }
    case NVGPU_GPU_IOCTL_OPEN_TSG: {
      auto* a = args<NvgpuGpuOpenTsgArgs>(arg);
      if (a->flags != 0 || a->source_device_instance_id != 0 || a->share_token != 0) return -EINVAL;
      a->tsg_fd =
          static_cast<uint32_t>(m.install(std::make_shared<TsgFile>(fe_), "anon_inode:nvgpu-tsg"));
      return 0;
    }
    case NVGPU_GPU_IOCTL_OPEN_CHANNEL: {
      auto* a = args<NvgpuGpuOpenChannelArgs>(arg);
      if (a->runlist_id_or_channel_fd != -1 && a->runlist_id_or_channel_fd != 0) return -EINVAL;
      a->runlist_id_or_channel_fd =
          m.install(std::make_shared<ChannelFile>(fe_), "anon_inode:nvgpu-channel");
      return 0;
    }
    default:
      return -ENOTTY;
  }
}

}  // namespace

std::shared_ptr<SimFile> TegraFrontEnd::open(const std::string& path, int* err) {
  if (path == kCtrlPath) return std::make_shared<CtrlFile>(*this);
  if (path == kNvmapPath) return std::make_shared<NvmapFile>(*this);
  *err = ENOENT;
  return nullptr;
}

// ---- TSG ----

void TsgFile::record_sm_error(uint32_t global_esr, uint32_t warp_esr) {
  std::lock_guard<std::mutex> lock(mutex_);
  sm_global_esr_ = global_esr;
  sm_warp_esr_ = warp_esr;
}

int TsgFile::ioctl(unsigned long request, void* arg) {
  if (int rc = check_nvgpu_request(request, kTsgMagic, 21, 32); rc != 0) return rc;
  SimMachine& m = fe_.machine();
  switch (request) {
    case NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT: {
      auto* a = args<NvgpuTsgCreateSubcontextArgs>(arg);
      if (a->type != NVGPU_TSG_SUBCONTEXT_TYPE_SYNC && a->type != NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC) {
        return -EINVAL;
      }
      auto f = std::dynamic_pointer_cast<AsFile>(m.file(a->as_fd));
      if (!f) return -EINVAL;
      std::lock_guard<std::mutex> lock(mutex_);
      uint32_t veid = 0;
      if (a->type == NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC) {
        if (next_veid_ >= 64) return -ENOSPC;
        veid = next_veid_++;
      }
      subcontexts_[veid] = f->space();
      a->veid = veid;
      return 0;
    }
    case NVGPU_TSG_IOCTL_BIND_CHANNEL_EX: {
      auto* a = args<NvgpuTsgBindChannelExArgs>(arg);
      for (uint8_t b : a->reserved) {
        if (b != 0) return -EINVAL;
      }
      auto ch = std::dynamic_pointer_cast<ChannelFile>(m.file(a->channel_fd));
      if (!ch || ch->tsg) return -EINVAL;
      // nvgpu takes the channel's VM at bind time: the AS bind must come first.
      if (!ch->as) {
        m.log().line("nvgpu: TSG bind of a channel without an address space");
        return -EINVAL;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      auto sub = subcontexts_.find(a->subcontext_id);
      if (sub == subcontexts_.end() || sub->second != ch->as->space()) return -EINVAL;
      ch->tsg = std::static_pointer_cast<TsgFile>(shared_from_this());
      ch->veid = a->subcontext_id;
      return 0;
    }
    case NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES: {
      auto* a = args<NvgpuTsgReadAllSmErrorStateArgs>(arg);
      if (a->num_sm != TegraFrontEnd::kNumSms ||
          a->buffer_size < a->num_sm * sizeof(NvgpuTsgSmErrorStateRecord) || a->buffer_mem == 0) {
        return -EINVAL;
      }
      auto* r = reinterpret_cast<NvgpuTsgSmErrorStateRecord*>(a->buffer_mem);
      std::memset(r, 0, a->num_sm * sizeof(NvgpuTsgSmErrorStateRecord));
      std::lock_guard<std::mutex> lock(mutex_);
      r[0].global_esr = sm_global_esr_;
      r[0].warp_esr = sm_warp_esr_;
      return 0;
    }
    default:
      return -ENOTTY;
  }
}

// ---- channel ----

ChannelFile::~ChannelFile() {
  if (channel_) fe_.machine().engine().remove_channel(channel_);
  if (gpfifo_va_ != 0 && as) as->unmap(gpfifo_va_);
}

void ChannelFile::report(Notifier& notifier, const std::shared_ptr<TsgFile>& tsg,
                         const ChannelFault& f) {
  uint32_t code = NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT;
  switch (f.kind) {
    case FaultKind::kMmu:
      code = NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT;
      break;
    case FaultKind::kPbdma:
    case FaultKind::kViolation:
      code = NVGPU_CHANNEL_PBDMA_ERROR;
      break;
    case FaultKind::kGraphics:
    case FaultKind::kBadMethod:
      code = NVGPU_CHANNEL_GR_EXCEPTION;
      break;
  }
  if (tsg && f.kind == FaultKind::kGraphics) tsg->record_sm_error(0x4, 0x10);
  std::lock_guard<std::mutex> lock(notifier.mutex);
  if (!notifier.buffer) return;
  auto* n = reinterpret_cast<NvgpuNotification*>(notifier.buffer->memory->host() + notifier.offset);
  uint64_t ns = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  n->time_stamp_ns[0] = static_cast<uint32_t>(ns);
  n->time_stamp_ns[1] = static_cast<uint32_t>(ns >> 32);
  n->info32 = code;
  n->info16 = 0;
  __atomic_store_n(&n->status, static_cast<uint16_t>(0xffff), __ATOMIC_RELEASE);
}

int ChannelFile::setup_bind(NvgpuChannelSetupBindArgs* a) {
  SimMachine& m = fe_.machine();
  if ((a->flags & NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT) == 0) {
    m.log().line("nvgpu (sim): only usermode submit is simulated");
    return -EINVAL;
  }
  if ((a->flags & NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC) == 0) {
    m.log().line("nvgpu: need deterministic for usermode submit");
    return -EINVAL;
  }
  if (a->num_gpfifo_entries < 2 || (a->num_gpfifo_entries & (a->num_gpfifo_entries - 1)) != 0 ||
      a->num_gpfifo_entries > (1u << 28)) {
    return -EINVAL;
  }
  if (!as) {
    m.log().line("nvgpu: not bound to an address space at time of setup_bind");
    return -EINVAL;
  }
  if (!tsg) {
    m.log().line("nvgpu: not bound to tsg at time of setup_bind");
    return -EINVAL;
  }
  if (channel_) return -EEXIST;
  if (wdt_enabled_) {
    m.log().line("nvgpu: deterministic is not compatible with watchdog");
    return -EINVAL;
  }
  if (a->gpfifo_dmabuf_fd == 0 || a->userd_dmabuf_fd == 0 || a->gpfifo_dmabuf_offset != 0 ||
      a->userd_dmabuf_offset != 0) {
    return -EINVAL;
  }
  auto gpfifo = std::dynamic_pointer_cast<DmabufFile>(m.file(a->gpfifo_dmabuf_fd));
  auto userd = std::dynamic_pointer_cast<DmabufFile>(m.file(a->userd_dmabuf_fd));
  if (!gpfifo || !userd || !gpfifo->buffer()->memory || !userd->buffer()->memory) return -EINVAL;
  uint64_t ring_bytes = std::max<uint64_t>(4096, uint64_t{a->num_gpfifo_entries} * 8);
  if (gpfifo->buffer()->size < ring_bytes || userd->buffer()->size < 4096) return -EINVAL;
  // The kernel maps the ring into the channel's VM itself, wherever its
  // allocator says: before nvhcq reserved the shader windows, this could be them.
  gpfifo_va_ = as->map_anywhere(gpfifo->buffer(), true);
  if (gpfifo_va_ == 0) return -ENOMEM;
  gpfifo_ = gpfifo->buffer();
  userd_ = userd->buffer();

  ChannelConfig c;
  c.token = fe_.next_token();
  c.name = "nvgpu channel " + std::to_string(c.token);
  c.as = as->space();
  c.ring_va = gpfifo_va_;
  c.entries = a->num_gpfifo_entries;
  c.userd = userd_->memory;
  c.classes = classes_;
  c.spec = &fe_.spec();
  c.group = tsg->group();
  // The GPU thread may report after this file is gone: the callback owns what it uses.
  c.report = [notifier = notifier_, tsg_file = std::weak_ptr<TsgFile>(tsg)](const ChannelFault& f) {
    report(*notifier, tsg_file.lock(), f);
  };
  channel_ = m.engine().add_channel(std::move(c));
  channel_->set_runnable(true);
  a->work_submit_token = channel_->config().token;
  a->gpfifo_gpu_va = gpfifo_va_;
  a->userd_gpu_va = 0;
  a->usermode_mmio_gpu_va = 0;
  return 0;
}

int ChannelFile::alloc_obj_ctx(NvgpuAllocObjCtxArgs* a) {
  const GpuSpec& s = fe_.spec();
  if (a->class_num != s.compute_class && a->class_num != s.dma_class) {
    fe_.machine().log().line("nvgpu: invalid obj class " + hex(a->class_num));
    return -EINVAL;
  }
  if (!tsg || (a->flags & ~7u) != 0) return -EINVAL;
  if (std::find(classes_.begin(), classes_.end(), a->class_num) != classes_.end()) return -EINVAL;
  classes_.push_back(a->class_num);
  if (channel_) channel_->add_class(a->class_num);
  a->obj_id = fe_.next_object_id();
  return 0;
}

int ChannelFile::set_error_notifier(NvgpuSetErrorNotifier* a) {
  auto f = std::dynamic_pointer_cast<DmabufFile>(fe_.machine().file(static_cast<int>(a->mem)));
  if (!f || !f->buffer()->memory) return -EINVAL;
  if (a->offset + sizeof(NvgpuNotification) > f->buffer()->size) return -EINVAL;
  std::lock_guard<std::mutex> lock(notifier_->mutex);
  notifier_->buffer = f->buffer();
  notifier_->offset = a->offset;
  return 0;
}

int ChannelFile::ioctl(unsigned long request, void* arg) {
  if (int rc = check_nvgpu_request(request, kChannelMagic, 128, sizeof(NvgpuChannelSetupBindArgs));
      rc != 0) {
    return rc;
  }
  switch (request) {
    case NVGPU_IOCTL_CHANNEL_WDT: {
      auto* a = args<NvgpuChannelWdtArgs>(arg);
      uint32_t status =
          a->wdt_status & (NVGPU_IOCTL_CHANNEL_DISABLE_WDT | NVGPU_IOCTL_CHANNEL_ENABLE_WDT);
      if (channel_ && status != NVGPU_IOCTL_CHANNEL_DISABLE_WDT) return -EINVAL;
      if (status == NVGPU_IOCTL_CHANNEL_DISABLE_WDT) {
        wdt_enabled_ = false;
      } else if (status == NVGPU_IOCTL_CHANNEL_ENABLE_WDT) {
        wdt_enabled_ = true;
      } else {
        return -EINVAL;
      }
      return 0;
    }
    case NVGPU_IOCTL_CHANNEL_SETUP_BIND:
      return setup_bind(args<NvgpuChannelSetupBindArgs>(arg));
    case NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX:
      return alloc_obj_ctx(args<NvgpuAllocObjCtxArgs>(arg));
    case NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER:
      return set_error_notifier(args<NvgpuSetErrorNotifier>(arg));
    default:
      return -ENOTTY;
  }
}

}  // namespace nvhcq::sim
