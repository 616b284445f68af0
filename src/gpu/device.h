#pragma once
// A GPU driven through hardware command queues. The Device owns the driver
// interface, one compute and one copy channel (each with its GPFIFO ring, a
// command ring and a 64-bit timeline signal), the kernel-argument ring, the
// signal pool and the shader local memory. gpu::Device never issues an ioctl:
// it asks drv::DriverIface for memory and channels.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "drv/driver_iface.h"
#include "gpu/buffer.h"
#include "gpu/code_heap.h"
#include "gpu/gpfifo.h"
#include "gpu/hw/arch.h"
#include "gpu/pushbuffer.h"
#include "gpu/signal.h"
#include "gpu/timeline_ring.h"

namespace nvhcq::gpu {

struct DeviceOptions {
  uint32_t compute_ring_entries = 0x4000;
  uint32_t copy_ring_entries = 0x4000;
  size_t command_ring_bytes = 8 << 20;  // per channel
  size_t kernarg_ring_bytes = 32 << 20;
  std::chrono::milliseconds timeout{10000};
};

// One channel's submission state.
struct EngineChannel {
  drv::Engine engine;
  std::unique_ptr<GpfifoRing> gpfifo;
  std::unique_ptr<TimelineRing> commands;
  Signal timeline;
  uint64_t submitted = 0;  // last timeline value handed to the GPU
};

class Device {
 public:
  // Opens GPU `index`: the Jetson iGPU through nvgpu when this machine is a
  // Jetson, else GPU `index` through the RM driver (desktop and datacenter GPUs).
  static std::unique_ptr<Device> open(int index = 0, const DeviceOptions& options = {});
  Device(std::unique_ptr<drv::DriverIface> driver, const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const drv::GpuInfo& info() const { return driver_->info(); }
  const hw::ArchParams& arch() const { return *arch_; }
  const hw::ShaderWindows& windows() const { return windows_; }
  drv::DriverIface& driver() { return *driver_; }
  const DeviceOptions& options() const { return options_; }

  // Video memory; cpu_access maps it for the CPU (write-combined).
  Buffer alloc(size_t bytes, bool cpu_access = false);
  // Pinned host memory mapped into the GPU.
  Buffer alloc_host(size_t bytes);
  // Maps page-aligned host memory the caller owns into the GPU (no copy).
  Buffer map_host(void* ptr, size_t bytes);
  void free(drv::Allocation& allocation);

  Signal new_signal(uint64_t initial_value = 0) { return signals_.acquire(initial_value); }
  // Waits on the CPU until signal >= value; raises GpuFaultError with the driver's
  // fault report on a channel error or after `timeout` (default: the device's).
  void wait(const Signal& signal, uint64_t value,
            std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // Waits for everything submitted so far on both channels.
  void synchronize();
  // Throws GpuFaultError if a channel reported an error (or did before).
  void check_errors();
  bool faulted() const { return !fault_.empty(); }

  // Copies between host memory and a buffer, choosing CPU copies for mapped
  // memory and the copy engine (through a staging buffer) otherwise. On unified
  // memory (Tegra) both are CPU copies made after synchronize().
  void upload(const Buffer& dst, size_t dst_offset, const void* src, size_t bytes);
  void download(void* dst, const Buffer& src, size_t src_offset, size_t bytes);

  // --- used by queues and programs ---
  EngineChannel& channel(drv::Engine engine);
  TimelineRing& kernargs() { return *kernargs_; }
  // Submits a pushbuffer on a channel, appending the timeline release; returns
  // the timeline value that marks its completion.
  uint64_t submit(drv::Engine engine, PushBuffer& pb);
  // Makes sure each thread may use `bytes` of local memory; returns the per-thread
  // size every QMD must carry from now on.
  uint32_t ensure_local_memory(uint32_t bytes_per_thread);
  uint32_t local_memory_per_thread() const { return slm_per_thread_; }
  // A program was loaded: invalidate the instruction cache before the next launch.
  // Where programs put their code and constant data.
  CodeHeap& code_heap() { return *code_heap_; }
  void note_code_upload() { code_uploaded_ = true; }
  bool take_code_upload() {
    bool b = code_uploaded_;
    code_uploaded_ = false;
    return b;
  }
  // Appends a semaphore release of `value` to `signal` suitable for `engine`.
  void encode_release(drv::Engine engine, PushBuffer& pb, uint64_t signal_va, uint64_t value);
  void encode_acquire(PushBuffer& pb, uint64_t signal_va, uint64_t value);

 private:
  void setup_channels();
  void wait_timeline(EngineChannel& ch, uint64_t value);
  // Rings the doorbell of each channel whose GPFIFO entries the GPU has not all
  // fetched (a wait without progress for GpfifoRing::kDoorbellKickAfter).
  void kick_unfetched_channels();

  std::unique_ptr<drv::DriverIface> driver_;
  DeviceOptions options_;
  const hw::ArchParams* arch_;
  hw::ShaderWindows windows_;
  SignalPool signals_;
  EngineChannel compute_, copy_;
  std::unique_ptr<TimelineRing> kernargs_;
  std::mutex submit_mutex_;
  Buffer local_memory_;
  uint32_t slm_per_thread_ = 0;
  bool code_uploaded_ = true;
  bool copy_engine_64bit_semaphores_ = true;
  std::atomic<bool> doorbell_kick_logged_{false};
  std::string fault_;
  Buffer staging_;
  std::unique_ptr<CodeHeap> code_heap_;  // freed before the driver closes, after every program
};

}  // namespace nvhcq::gpu
