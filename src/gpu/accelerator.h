#pragma once
// What the tensor layer, the LLM engine and the benchmarks need from a GPU, as
// one interface with two implementations: "nv" (nvhcq's direct path, gpu::Device)
// and "cuda" (the CUDA driver API, cuda/). Both load the same CUBIN bytes and run
// the same kernels in stream order, so a benchmark or test body runs on either by
// choice of a parameter.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/kernel_args.h"
#include "gpu/program.h"

namespace nvhcq::gpu {

// Device memory owned by an Accelerator. Move-only; freed on destruction.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  virtual ~DeviceMemory() = default;
  uint64_t va() const { return va_; }
  size_t size() const { return size_; }

 protected:
  uint64_t va_ = 0;
  size_t size_ = 0;
};

// A kernel loaded on an Accelerator.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const std::string& name() const = 0;
  virtual uint32_t max_threads_per_block() const = 0;
  // Blocks of the thread-block clusters the kernel was compiled for
  // (__cluster_dims__ along x; 1: no clusters). A launch's grid is a multiple.
  virtual uint32_t cluster_blocks() const { return 1; }
};

// A recorded sequence of launches and copies, replayed as one unit (a CUDA graph
// on cuda; one submission of chained QMDs on nv). Launch arguments can be
// changed between replays.
class Graph {
 public:
  virtual ~Graph() = default;
  virtual size_t launches() const = 0;
  // Replaces the arguments of the i-th recorded launch.
  virtual void set_args(size_t launch_index, const KernelArgs& args) = 0;
};

// A GPU timestamp in the stream.
struct TimePoint {
  uint64_t handle = 0;
};

class Accelerator {
 public:
  virtual ~Accelerator() = default;
  virtual std::string backend() const = 0;  // "nv" or "cuda"
  virtual std::string device_name() const = 0;
  virtual std::string arch() const = 0;     // NVRTC target, "sm_90"
  virtual uint32_t sm_count() const = 0;
  virtual uint64_t memory_bytes() const = 0;

  virtual std::unique_ptr<DeviceMemory> alloc(size_t bytes) = 0;
  // Pinned host memory the GPU can read and write; cpu() is its host address.
  virtual std::unique_ptr<DeviceMemory> alloc_host(size_t bytes, void** cpu) = 0;
  // Synchronous copies between host memory and device memory.
  virtual void upload(const DeviceMemory& dst, size_t dst_offset, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const DeviceMemory& src, size_t src_offset, size_t bytes) = 0;

  virtual std::unique_ptr<Kernel> load(const std::vector<uint8_t>& cubin, const std::string& name) = 0;
  // Queues a launch (stream order). Returns at once; the work runs later.
  virtual void launch(const Kernel& kernel, const KernelArgs& args, const LaunchDims& dims) = 0;
  // Queues a launch that orders itself against the launches before it: its
  // kernel waits in memory for what it reads (kernels/llm_chain.cuh), so the
  // GPU may start it before they finish. Backends that cannot run launches
  // side by side queue it in stream order, which is also correct.
  virtual void launch_self_ordered(const Kernel& kernel, const KernelArgs& args, const LaunchDims& dims) {
    launch(kernel, args, dims);
  }
  // Queues a device-to-device (or host<->device, for host memory) copy by VA.
  virtual void copy(uint64_t dst_va, uint64_t src_va, size_t bytes) = 0;
  // Submits everything queued and waits for it.
  virtual void synchronize() = 0;

  // Records a GPU time point in the stream; elapsed_ms() needs both completed
  // (synchronize first).
  virtual TimePoint record_time() = 0;
  virtual double elapsed_ms(TimePoint from, TimePoint to) = 0;

  // Captures the launches and copies queued between begin and end into a Graph
  // instead of running them.
  virtual void begin_capture() = 0;
  virtual std::unique_ptr<Graph> end_capture() = 0;
  virtual void replay(Graph& graph) = 0;

  // Bytes of device memory this accelerator has allocated and not freed.
  virtual uint64_t allocated_bytes() const = 0;
};

// "nv": nvhcq's direct path on GPU `index` (RM driver).
std::unique_ptr<Accelerator> open_nv(int index = 0);

}  // namespace nvhcq::gpu
