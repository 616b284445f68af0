// TegraGpu's channels: a compute and a copy channel on the graphics runlist, in
// the one TSG and subcontext, set up for usermode submit (GPFIFO ring and USERD
// in nvmap memory, a work-submit token for the doorbell), each with the error
// notifier the kernel fills when it recovers the channel.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "drv/tegra/nvgpu_abi.h"
#include "drv/tegra/nvmap_abi.h"
#include "drv/tegra/tegra_gpu.h"

namespace nvhcq::drv::tegra {
namespace {

constexpr uint64_t kNotifierBytes = 4096;
constexpr uint64_t kUserdBytes = 4096;

const char* error_name(uint32_t code) {
  switch (code) {
    case NVGPU_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT:
      return "channel idle timeout";
    case NVGPU_CHANNEL_GR_EXCEPTION:
      return "graphics engine exception (illegal instruction, bad address, ...)";
    case NVGPU_CHANNEL_GR_SEMAPHORE_TIMEOUT:
      return "semaphore timeout";
    case NVGPU_CHANNEL_GR_ILLEGAL_NOTIFY:
      return "illegal notify";
    case NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT:
      return "MMU fault (bad GPU virtual address)";
    case NVGPU_CHANNEL_PBDMA_ERROR:
      return "PBDMA error (invalid pushbuffer or GPFIFO entry)";
    case NVGPU_CHANNEL_RESETCHANNEL_VERIF_ERROR:
      return "channel reset";
    default:
      return "channel error";
  }
}

}  // namespace

void TegraGpu::create_notifier() {
  // One buffer holds both channels' notifiers (the kernel writes them; we poll).
  notifier_ = nvmap_alloc(kNotifierBytes, NVMAP_HANDLE_CACHEABLE);
  std::memset(notifier_.cpu, 0, kNotifierBytes);
}

TegraGpu::Channel TegraGpu::create_channel(Engine engine, uint32_t entries) {
  if (entries < 2 || (entries & (entries - 1)) != 0) {
    throw Error("GPFIFO ring entries must be a power of two >= 2, got " + std::to_string(entries));
  }
  bool compute = engine == Engine::kCompute;
  Channel ch;
  ch.notifier_offset = compute ? 0 : sizeof(NvgpuNotification);

  NvgpuGpuOpenChannelArgs open{};
  open.runlist_id_or_channel_fd = kGraphicsRunlist;
  ioctl_or_throw(ctrl_.get(), NVGPU_GPU_IOCTL_OPEN_CHANNEL, &open, "OPEN_CHANNEL");
  ch.fd = Fd(open.runlist_id_or_channel_fd);

  // The order CUDA uses and nvgpu requires: the address space first, then the TSG.
  NvgpuAsBindChannelArgs bind_as{};
  bind_as.channel_fd = static_cast<uint32_t>(ch.fd.get());
  ioctl_or_throw(as_.get(), NVGPU_AS_IOCTL_BIND_CHANNEL, &bind_as, "AS BIND_CHANNEL");
  NvgpuTsgBindChannelExArgs bind_tsg{};
  bind_tsg.channel_fd = ch.fd.get();
  bind_tsg.subcontext_id = veid_;
  ioctl_or_throw(tsg_.get(), NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &bind_tsg, "TSG BIND_CHANNEL_EX");
  // Deterministic (usermode) channels must not have the kernel watchdog; hangs
  // are caught by the runtime's own wait timeout instead.
  NvgpuChannelWdtArgs wdt{};
  wdt.wdt_status = NVGPU_IOCTL_CHANNEL_DISABLE_WDT;
  ioctl_or_throw(ch.fd.get(), NVGPU_IOCTL_CHANNEL_WDT, &wdt, "CHANNEL_WDT");

  ch.gpfifo = nvmap_alloc(std::max<uint64_t>(entries * 8ull, 4096), NVMAP_HANDLE_CACHEABLE);
  ch.userd = nvmap_alloc(kUserdBytes, NVMAP_HANDLE_CACHEABLE);
  std::memset(ch.userd.cpu, 0, kUserdBytes);
  {
    Fd gpfifo_fd = nvmap_dmabuf(ch.gpfifo.handle);
    Fd userd_fd = nvmap_dmabuf(ch.userd.handle);
    NvgpuChannelSetupBindArgs bind{};
    bind.num_gpfifo_entries = entries;
    bind.flags = NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC |
                 NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT;
    bind.userd_dmabuf_fd = userd_fd.get();
    bind.gpfifo_dmabuf_fd = gpfifo_fd.get();
    ioctl_or_throw(ch.fd.get(), NVGPU_IOCTL_CHANNEL_SETUP_BIND, &bind, "CHANNEL_SETUP_BIND");
    ch.handles.token = bind.work_submit_token;
  }

  NvgpuAllocObjCtxArgs obj{};
  obj.class_num = compute ? info_.compute_class : info_.dma_class;
  ioctl_or_throw(ch.fd.get(), NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &obj, "CHANNEL_ALLOC_OBJ_CTX");

  {
    Fd notifier_fd = nvmap_dmabuf(notifier_.handle);
    NvgpuSetErrorNotifier en{};
    en.offset = ch.notifier_offset;
    en.size = sizeof(NvgpuNotification);
    en.mem = static_cast<uint32_t>(notifier_fd.get());
    ioctl_or_throw(ch.fd.get(), NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, &en,
                   "CHANNEL_SET_ERROR_NOTIFIER");
  }

  auto* userd = static_cast<uint8_t*>(ch.userd.cpu);
  ch.handles.engine = engine;
  ch.handles.ring = static_cast<uint64_t*>(ch.gpfifo.cpu);
  ch.handles.ring_entries = entries;
  ch.handles.gp_get = reinterpret_cast<volatile uint32_t*>(userd + kUserdGpGetOffset);
  ch.handles.gp_put = reinterpret_cast<volatile uint32_t*>(userd + kUserdGpPutOffset);
  ch.handles.doorbell = usermode_ + kUsermodeDoorbellOffset / 4;
  ch.handles.engine_class = obj.class_num;
  ch.handles.id = static_cast<uint64_t>(ch.fd.get());
  log::debug(compute ? "compute" : "copy", " channel fd ", ch.fd.get(), ": ", entries,
             " entries, token ", ch.handles.token);
  return ch;
}

ChannelHandles TegraGpu::open_channel(Engine engine, uint32_t ring_entries) {
  bool compute = engine == Engine::kCompute;
  bool& open = compute ? compute_open_ : copy_open_;
  if (open)
    throw Error(std::string("the ") + (compute ? "compute" : "copy") + " channel is in use");
  // Channels are made on first use, after gpu::Device reserved the shader
  // windows: SETUP_BIND maps the ring into the GPU VA space.
  if (notifier_.handle == 0) create_notifier();
  Channel& ch = compute ? compute_ : copy_;
  ch = create_channel(engine, ring_entries);
  open = true;
  return ch.handles;
}

std::string TegraGpu::channel_error() {
  if (notifier_.cpu == nullptr) return {};
  for (const Channel* ch : {&compute_, &copy_}) {
    if (!ch->fd.valid()) continue;
    const auto* n = reinterpret_cast<const volatile NvgpuNotification*>(
        static_cast<const uint8_t*>(notifier_.cpu) + ch->notifier_offset);
    if (n->status == 0) continue;
    uint32_t code = n->info32;
    return std::string(ch == &compute_ ? "compute" : "copy") + " channel error " +
           std::to_string(code) + ": " + error_name(code);
  }
  return {};
}

std::string TegraGpu::fault_report() {
  std::string report = channel_error();
  if (report.empty()) report = "no channel error reported";
  // nvgpu reports the faulting address only in the kernel log; the SM error
  // state (ESRs, warp PC) can be read back per TSG.
  uint32_t sms = info_.tpc_count * info_.sm_per_tpc;
  std::vector<NvgpuTsgSmErrorStateRecord> records(sms);
  NvgpuTsgReadAllSmErrorStateArgs args{};
  args.num_sm = sms;
  args.buffer_mem = reinterpret_cast<uint64_t>(records.data());
  args.buffer_size = records.size() * sizeof(NvgpuTsgSmErrorStateRecord);
  try {
    ioctl_or_throw(tsg_.get(), NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES, &args,
                   "TSG_READ_ALL_SM_ERROR_STATES");
    int shown = 0;
    for (uint32_t i = 0; i < sms && shown < 4; ++i) {
      const auto& r = records[i];
      if (r.global_esr == 0 && r.warp_esr == 0) continue;
      char line[160];
      std::snprintf(line, sizeof(line), "; SM %u: global esr 0x%x, warp esr 0x%x, pc 0x%llx", i,
                    r.global_esr, r.warp_esr, static_cast<unsigned long long>(r.warp_esr_pc));
      report += line;
      ++shown;
    }
  } catch (const Error& e) {
    report += std::string("; SM error state unavailable: ") + e.what();
  }
  return report + "; the faulting address is in the kernel log (dmesg | grep nvgpu)";
}

}  // namespace nvhcq::drv::tegra
