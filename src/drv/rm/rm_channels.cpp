// RmGpu's channels: one channel group (TSG) holding a compute channel and a copy
// channel that share one context (VA space), their GPFIFO rings and USERD in one
// CPU-visible video-memory area, the engine objects bound to them, and UVM's
// registration of each channel.

#include "base/error.h"
#include "base/log.h"
#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_client.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_gpu.h"
#include "drv/rm/rm_params.h"

namespace nvhcq::drv::rm {
namespace {

constexpr uint64_t kUserdBytes = 0x1000;  // one USERD page after each ring
// USERD must be 512-byte aligned: RM does not check, and the runlist entry
// silently drops the low bits (a ring of fewer than 64 entries would hang).
constexpr uint64_t kUserdAlign = 512;
constexpr uint64_t kUserdGpGet = 0x88;              // Nvc86fControl.GPGet
constexpr uint64_t kUserdGpPut = 0x8c;              // Nvc86fControl.GPPut
constexpr uint64_t kDoorbellOffset = 0x90;          // NVC361_NOTIFY_CHANNEL_PENDING
constexpr uint64_t kChannelUvmRange = 64ull << 20;  // VA UVM reserves per channel
constexpr size_t kNotifierBytes = 64 << 10;

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

void RmGpu::create_channels(const RmGpuOptions& options) {
  RmClient& rm = RmClient::instance();
  NvChannelGroupAllocationParams group{};
  group.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
  channel_group_ = rm.alloc(device_, KEPLER_CHANNEL_GROUP_A, group, "allocate the channel group");
  NvCtxshareAllocationParams share{};
  share.hVASpace = vaspace_;
  share.flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
  ctxshare_ = rm.alloc(channel_group_, FERMI_CONTEXT_SHARE_A, share, "allocate the context share");
  notifier_ = alloc_sysmem_notifier(kNotifierBytes);

  uint64_t compute_slot = round_up(options.compute_ring_entries * 8ull + kUserdBytes, 0x10000);
  uint64_t copy_slot = round_up(options.copy_ring_entries * 8ull + kUserdBytes, 0x10000);
  MemFlags area_flags;
  area_flags.cpu_access = true;
  area_flags.contiguous = true;
  gpfifo_area_ = alloc(compute_slot + copy_slot, area_flags);

  compute_ = create_channel(Engine::kCompute, options.compute_ring_entries, 0);
  copy_ = create_channel(Engine::kCopy, options.copy_ring_entries, compute_slot);

  Nva06cScheduleParams schedule{};
  schedule.bEnable = 1;
  rm.control(channel_group_, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, schedule,
             "enable scheduling of the channel group");
}

RmGpu::Channel RmGpu::create_channel(Engine engine, uint32_t entries, uint64_t area_offset) {
  if (entries < 2 || (entries & (entries - 1)) != 0) {
    throw Error("GPFIFO ring entries must be a power of two >= 2, got " + std::to_string(entries));
  }
  RmClient& rm = RmClient::instance();
  Channel ch;
  ch.ring_offset = area_offset;
  NvChannelAllocParams p{};
  p.hObjectError = notifier_;
  p.hObjectBuffer = static_cast<NvHandle>(gpfifo_area_.handle);
  p.gpFifoOffset = gpfifo_area_.gpu_va + area_offset;
  p.gpFifoEntries = entries;
  p.hContextShare = ctxshare_;
  p.hUserdMemory[0] = static_cast<NvHandle>(gpfifo_area_.handle);
  uint64_t userd_offset = area_offset + round_up(entries * 8ull, kUserdAlign);
  p.userdOffset[0] = userd_offset;
  ch.gpfifo = rm.alloc(channel_group_, classes_.gpfifo, p, "allocate a GPFIFO channel");

  bool compute = engine == Engine::kCompute;
  ch.engine_object =
      rm.alloc(ch.gpfifo, compute ? classes_.compute : classes_.dma,
               compute ? "allocate the compute engine object" : "allocate the copy engine object");
  if (compute) {
    // The debugger object reads SM error state and MMU fault info for fault
    // reports. It is a diagnostic: a GPU that refuses it still computes.
    Nv83deAllocParams dbg{};
    dbg.hAppClient = rm.root();
    dbg.hClass3dObject = ch.engine_object;
    try {
      debugger_ = rm.alloc(device_, GT200_DEBUGGER, dbg, "allocate the debugger object");
    } catch (const Error& e) {
      log::info("no debugger object (fault reports will lack SM state): ", e.what());
    }
  }

  Nvc36fWorkSubmitTokenParams token{};
  token.workSubmitToken = 0xffffffffu;
  rm.control(ch.gpfifo, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, token,
             "read the work-submit token");

  UvmRegisterChannelParams reg{};
  reg.gpuUuid = uuid_;
  reg.rmCtrlFd = rm.ctl_fd();
  reg.hClient = rm.root();
  reg.hChannel = ch.gpfifo;
  reg.base = gpu_va_.alloc(kChannelUvmRange, 2ull << 20);
  reg.length = kChannelUvmRange;
  uvm_->call(UVM_REGISTER_CHANNEL, reg, "UVM_REGISTER_CHANNEL");

  auto* area = static_cast<uint8_t*>(gpfifo_area_.cpu);
  uint8_t* userd = area + userd_offset;
  ch.handles.engine = engine;
  ch.handles.ring = reinterpret_cast<uint64_t*>(area + area_offset);
  ch.handles.ring_entries = entries;
  ch.handles.gp_get = reinterpret_cast<volatile uint32_t*>(userd + kUserdGpGet);
  ch.handles.gp_put = reinterpret_cast<volatile uint32_t*>(userd + kUserdGpPut);
  ch.handles.doorbell = usermode_mmio_ + kDoorbellOffset / 4;
  ch.handles.token = token.workSubmitToken;
  ch.handles.engine_class = compute ? classes_.compute : classes_.dma;
  ch.handles.id = ch.gpfifo;
  log::debug(compute ? "compute" : "copy", " channel ", ch.gpfifo, ": ", entries,
             " entries, token ", token.workSubmitToken);
  return ch;
}

ChannelHandles RmGpu::open_channel(Engine engine, uint32_t ring_entries) {
  bool compute = engine == Engine::kCompute;
  Channel& ch = compute ? compute_ : copy_;
  bool& taken = compute ? compute_taken_ : copy_taken_;
  if (taken)
    throw Error(std::string("the ") + (compute ? "compute" : "copy") + " channel is in use");
  if (ring_entries > ch.handles.ring_entries) {
    throw Error("asked for a ring of " + std::to_string(ring_entries) + " entries; this device's " +
                "channel has " + std::to_string(ch.handles.ring_entries));
  }
  taken = true;
  return ch.handles;
}

}  // namespace nvhcq::drv::rm
