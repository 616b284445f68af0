#include "gpu/device.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "drv/kernel_log_reader.h"
#include "drv/rm/rm_gpu.h"
#include "drv/tegra/tegra_gpu.h"
#include "gpu/host_copy.h"
#include "gpu/hw/barrier.h"
#include "gpu/hw/methods.h"
#include "gpu/queue.h"

namespace nvhcq::gpu {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStagingBytes = 32 << 20;  // two 16 MiB halves, used alternately

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

std::unique_ptr<Device> Device::open(int index, const DeviceOptions& options) {
  // A Jetson's integrated GPU is reached through nvgpu; its (display-only) RM
  // driver, if any, lists no GPU to compute on.
  if (drv::tegra::TegraGpu::present()) {
    if (index != 0) {
      throw Error("this Jetson has one GPU (index 0); asked for index " + std::to_string(index));
    }
    return std::make_unique<Device>(std::make_unique<drv::tegra::TegraGpu>(), options);
  }
  drv::rm::RmGpuOptions rm_options;
  rm_options.compute_ring_entries = options.compute_ring_entries;
  rm_options.copy_ring_entries = options.copy_ring_entries;
  return std::make_unique<Device>(std::make_unique<drv::rm::RmGpu>(index, rm_options), options);
}

Device::Device(std::unique_ptr<drv::DriverIface> driver, const DeviceOptions& options)
    : driver_(std::move(driver)),
      options_(options),
      arch_(&hw::arch_params(driver_->info().sm_version)),
      windows_(hw::shader_windows(driver_->info().va_limit)),
      signals_(this) {
  code_heap_ = std::make_unique<CodeHeap>(*this);
  driver_->reserve_va(windows_.local, hw::ShaderWindows::kSize);
  driver_->reserve_va(windows_.shared, hw::ShaderWindows::kSize);
  copy_engine_64bit_semaphores_ =
      driver_->info().dma_class != 0xc6b5;  // AMPERE_DMA_COPY_A is 32-bit
  setup_channels();
}

void Device::setup_channels() {
  for (drv::Engine engine : {drv::Engine::kCompute, drv::Engine::kCopy}) {
    EngineChannel& ch = channel(engine);
    ch.engine = engine;
    uint32_t entries = engine == drv::Engine::kCompute ? options_.compute_ring_entries
                                                       : options_.copy_ring_entries;
    ch.gpfifo = std::make_unique<GpfifoRing>(
        driver_->open_channel(engine, entries), [this] { check_errors(); }, options_.timeout,
        [this] { return driver_->fault_report(); });
    ch.timeline = new_signal(0);
    ch.commands =
        std::make_unique<TimelineRing>(alloc(options_.command_ring_bytes, true),
                                       [this, &ch](uint64_t value) { wait_timeline(ch, value); });
  }
  kernargs_ =
      std::make_unique<TimelineRing>(alloc(options_.kernarg_ring_bytes, true),
                                     [this](uint64_t value) { wait_timeline(compute_, value); });

  PushBuffer compute_setup;
  compute_setup.method(hw::kSubchCompute, hw::compute::SET_OBJECT, {info().compute_class});
  compute_setup.method(hw::kSubchCompute, hw::compute::SET_SHADER_LOCAL_MEMORY_WINDOW_A,
                       {PushBuffer::hi(windows_.local), PushBuffer::lo(windows_.local)});
  compute_setup.method(hw::kSubchCompute, hw::compute::SET_SHADER_SHARED_MEMORY_WINDOW_A,
                       {PushBuffer::hi(windows_.shared), PushBuffer::lo(windows_.shared)});
  submit(drv::Engine::kCompute, compute_setup);
  PushBuffer copy_setup;
  copy_setup.method(hw::kSubchCopy, hw::copy::SET_OBJECT, {info().dma_class});
  submit(drv::Engine::kCopy, copy_setup);
  synchronize();
}

Device::~Device() {
  try {
    if (fault_.empty()) synchronize();
  } catch (const Error& e) {
    log::warn("closing the GPU after an error: ", e.what());
  }
}

EngineChannel& Device::channel(drv::Engine engine) {
  return engine == drv::Engine::kCompute ? compute_ : copy_;
}

Buffer Device::alloc(size_t bytes, bool cpu_access) {
  drv::MemFlags flags;
  flags.cpu_access = cpu_access;
  return Buffer(this, driver_->alloc(bytes, flags));
}

Buffer Device::alloc_host(size_t bytes) {
  drv::MemFlags flags;
  flags.location = drv::MemLocation::kHost;
  flags.cpu_access = true;
  flags.gpu_cached = false;
  return Buffer(this, driver_->alloc(bytes, flags));
}

Buffer Device::map_host(void* ptr, size_t bytes) {
  return Buffer(this, driver_->map_host(ptr, bytes));
}

void Device::free(drv::Allocation& allocation) {
  driver_->free(allocation);
}

void Device::encode_release(drv::Engine engine, PushBuffer& pb, uint64_t va, uint64_t value) {
  if (engine == drv::Engine::kCopy && copy_engine_64bit_semaphores_) {
    // A copy-engine release is ordered after the copies before it and flushes them.
    pb.method(
        hw::kSubchCopy, hw::copy::SET_SEMAPHORE_A,
        {PushBuffer::hi(va), PushBuffer::lo(va), PushBuffer::lo(value), PushBuffer::hi(value)});
    pb.method(
        hw::kSubchCopy, hw::copy::LAUNCH_DMA,
        {hw::copy::LAUNCH_DMA_FLUSH_ENABLE | hw::copy::LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD |
         hw::copy::LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD});
    return;
  }
  // A host release waits for the channel's engine to go idle first (WFI), so it
  // follows every launch or copy before it; it also writes the GPU timestamp.
  pb.method(
      hw::kSubchHost, hw::host::SEM_ADDR_LO,
      {PushBuffer::lo(va), PushBuffer::hi(va), PushBuffer::lo(value), PushBuffer::hi(value),
       hw::host::SEM_EXECUTE_OPERATION_RELEASE | hw::host::SEM_EXECUTE_RELEASE_WFI |
           hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT | hw::host::SEM_EXECUTE_RELEASE_TIMESTAMP});
}

void Device::encode_acquire(PushBuffer& pb, uint64_t va, uint64_t value) {
  pb.method(
      hw::kSubchHost, hw::host::SEM_ADDR_LO,
      {PushBuffer::lo(va), PushBuffer::hi(va), PushBuffer::lo(value), PushBuffer::hi(value),
       hw::host::SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ | hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT});
}

uint64_t Device::submit(drv::Engine engine, PushBuffer& pb) {
  check_errors();
  std::lock_guard<std::mutex> lock(submit_mutex_);
  EngineChannel& ch = channel(engine);
  uint64_t value = ch.submitted + 1;
  encode_release(engine, pb, ch.timeline.va(), value);
  TimelineRing::Span span = ch.commands->alloc(pb.size_bytes(), 256);
  std::memcpy(span.cpu, pb.words().data(), pb.size_bytes());
  ch.commands->tag(value);
  if (engine == drv::Engine::kCompute) kernargs_->tag(value);
  ch.gpfifo->submit(span.va, static_cast<uint32_t>(pb.words().size()));
  ch.submitted = value;
  return value;
}

void Device::wait_timeline(EngineChannel& ch, uint64_t value) {
  wait(ch.timeline, value);
}

void Device::wait(const Signal& signal, uint64_t value, std::chrono::milliseconds timeout) {
  if (signal.value() >= value) return;
  if (timeout.count() == 0) timeout = options_.timeout;
  auto start = Clock::now();
  auto next_kick = start + GpfifoRing::kDoorbellKickAfter;
  for (uint64_t spins = 1;; ++spins) {
    if (signal.value() >= value) return;
    if (spins % 1024 == 0) {
      check_errors();
      auto now = Clock::now();
      auto elapsed = now - start;
      if (now >= next_kick) {
        kick_unfetched_channels();
        next_kick = now + GpfifoRing::kDoorbellKickAfter;
      }
      if (elapsed > timeout) {
        // A timeout alone does not poison the device (the caller may have waited
        // on a signal it sets later); a channel error does, in check_errors().
        // Where each channel stands tells a hung kernel (all entries fetched, the
        // last one unfinished) from work the GPU never fetched.
        const std::string channels =
            "compute " + compute_.gpfifo->position() + ", timeline " +
            std::to_string(compute_.timeline.value()) + "/" + std::to_string(compute_.submitted) +
            "; copy " + copy_.gpfifo->position() + ", timeline " +
            std::to_string(copy_.timeline.value()) + "/" + std::to_string(copy_.submitted);
        throw GpuFaultError("GPU did not reach signal value " + std::to_string(value) + " within " +
                                std::to_string(timeout.count()) + " ms (it is at " +
                                std::to_string(signal.value()) + "; " + channels +
                                "): " + driver_->fault_report(),
                            "wait", 0, "a kernel may hang, or wait on a signal nobody sets");
      }
      // Spin for the first ~50 µs (launch latency matters), then give the core away.
      if (elapsed > std::chrono::microseconds(50)) std::this_thread::yield();
    } else {
      hw::cpu_relax();
    }
  }
}

void Device::kick_unfetched_channels() {
  for (EngineChannel* ch : {&compute_, &copy_}) {
    if (ch->gpfifo->fetched_all()) continue;
    // Logged once per device, for diagnosis: a kernel that runs long looks the
    // same from here (its entry fetched and busy, the next ones waiting).
    if (!doorbell_kick_logged_.exchange(true)) {
      log::debug("the ", ch->engine == drv::Engine::kCompute ? "compute" : "copy",
                 " channel has unfetched GPFIFO entries (", ch->gpfifo->position(), ", timeline ",
                 ch->timeline.value(), "/", ch->submitted,
                 ") during a wait without progress: ringing its doorbell again");
    }
    ch->gpfifo->ring_doorbell();
  }
}

void Device::check_errors() {
  if (!fault_.empty()) throw GpuFaultError(fault_);
  std::string e = driver_->channel_error();
  if (e.empty()) return;
  fault_ = e + "; " + driver_->fault_report();
  // The driver's own words on the fault (RM's Xid line names the engine and the
  // fault type; nvgpu logs SM and MMU state), when the kernel log is readable.
  for (const std::string& line : drv::recent_gpu_errors(std::chrono::seconds(30), getpid())) {
    fault_ += "; kernel log: " + line;
  }
  throw GpuFaultError(fault_, "channel error", 0, "the device must be reopened");
}

void Device::synchronize() {
  wait(compute_.timeline, compute_.submitted);
  wait(copy_.timeline, copy_.submitted);
  check_errors();
}

uint32_t Device::ensure_local_memory(uint32_t bytes_per_thread) {
  uint32_t needed = static_cast<uint32_t>(round_up(bytes_per_thread, 32));
  if (needed <= slm_per_thread_) return slm_per_thread_;
  // The GPU may still run kernels that use the current local memory.
  synchronize();
  const auto& gi = info();
  uint64_t per_tpc = round_up(
      round_up(uint64_t{needed} * 32, 0x200) * gi.max_warps_per_sm * gi.sm_per_tpc, 0x8000);
  uint64_t total = round_up(per_tpc * gi.tpc_per_gpc * gi.num_gpcs, 0x20000);
  Buffer memory = alloc(total);
  PushBuffer pb;
  pb.method(hw::kSubchCompute, hw::compute::SET_SHADER_LOCAL_MEMORY_A,
            {PushBuffer::hi(memory.va()), PushBuffer::lo(memory.va())});
  pb.method(hw::kSubchCompute, hw::compute::SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A,
            {PushBuffer::hi(per_tpc), PushBuffer::lo(per_tpc), 0xff});
  submit(drv::Engine::kCompute, pb);
  synchronize();
  local_memory_ = std::move(memory);  // the old one is idle: synchronized above
  slm_per_thread_ = needed;
  log::debug("shader local memory: ", needed, " bytes/thread, ", total >> 20, " MiB");
  return slm_per_thread_;
}

void Device::upload(const Buffer& dst, size_t dst_offset, const void* src, size_t bytes) {
  if (dst_offset > dst.size() || bytes > dst.size() - dst_offset) {
    throw Error("upload of " + std::to_string(bytes) + " bytes at " + std::to_string(dst_offset) +
                " overruns a " + std::to_string(dst.size()) + "-byte buffer");
  }
  if (bytes == 0) return;
  if (dst.cpu() != nullptr) {
    // Unified memory (Tegra): the buffer is the memory the GPU uses, so the GPU
    // must be done with it first; then a CPU copy beats any DMA staging.
    if (info().unified_memory) synchronize();
    std::memcpy(dst.cpu_as<uint8_t>() + dst_offset, src, bytes);
    hw::flush_writes_before_doorbell();
    return;
  }
  if (!staging_.valid()) staging_ = alloc_host(kStagingBytes);
  size_t half = kStagingBytes / 2;
  uint64_t pending[2] = {0, 0};
  const auto* in = static_cast<const uint8_t*>(src);
  for (size_t done = 0, part = 0; done < bytes; done += half, part ^= 1) {
    size_t n = std::min(half, bytes - done);
    if (pending[part] != 0) wait(copy_.timeline, pending[part]);
    host_copy(staging_.cpu_as<uint8_t>() + part * half, in + done, n);
    CopyQueue q;
    q.copy(dst.va() + dst_offset + done, staging_.va() + part * half, n);
    pending[part] = q.submit(*this);
  }
  wait(copy_.timeline, copy_.submitted);
}

void Device::download(void* dst, const Buffer& src, size_t src_offset, size_t bytes) {
  if (src_offset > src.size() || bytes > src.size() - src_offset) {
    throw Error("download of " + std::to_string(bytes) + " bytes at " + std::to_string(src_offset) +
                " overruns a " + std::to_string(src.size()) + "-byte buffer");
  }
  if (bytes == 0) return;
  if (info().unified_memory && src.cpu() != nullptr) {
    // Unified memory (Tegra): read the GPU's results in place once it is done;
    // the SoC keeps the CPU caches coherent with the GPU's writes.
    synchronize();
    std::memcpy(dst, src.cpu_as<uint8_t>() + src_offset, bytes);
    return;
  }
  if (src.is_host()) {
    std::memcpy(dst, src.cpu_as<uint8_t>() + src_offset, bytes);
    return;
  }
  // Video memory is read through the copy engine: CPU reads over BAR1 are slow.
  if (!staging_.valid()) staging_ = alloc_host(kStagingBytes);
  size_t half = kStagingBytes / 2;
  auto* out = static_cast<uint8_t*>(dst);
  uint64_t pending[2] = {0, 0};
  size_t offsets[2] = {0, 0}, sizes[2] = {0, 0};
  size_t part = 0;
  for (size_t done = 0; done < bytes || pending[0] != 0 || pending[1] != 0;) {
    if (pending[part] != 0) {
      wait(copy_.timeline, pending[part]);
      host_copy(out + offsets[part], staging_.cpu_as<uint8_t>() + part * half, sizes[part]);
      pending[part] = 0;
    }
    if (done < bytes) {
      size_t n = std::min(half, bytes - done);
      CopyQueue q;
      q.copy(staging_.va() + part * half, src.va() + src_offset + done, n);
      offsets[part] = done;
      sizes[part] = n;
      pending[part] = q.submit(*this);
      done += n;
    }
    part ^= 1;
  }
}

}  // namespace nvhcq::gpu
