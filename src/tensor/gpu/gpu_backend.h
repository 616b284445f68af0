#pragma once
// GpuBackend: the tensor Backend of the "nv" and "cuda" devices, one
// implementation over gpu::Accelerator. execute() plans the schedule
// (fusion_plan.h), generates the fused kernels (fused_kernels.h) and library
// launches (library_kernels.h), compiles and loads them (kernel_loader.h),
// allocates the materialized buffers (buffer_pool.h) and queues the launches in
// stream order; reads synchronize. It also records launches for tensor::Jit
// (capture.h).
//
// f64 is not supported (supports() says so). Data-dependent errors (an index
// out of range in gather or scatter_add) are flagged by the kernel and raised by
// the next read of tensor data. NVHCQ_POISON_BUFFERS=1 (or
// set_poison_new_buffers) fills new buffers with 0x7F bytes, so an element a
// kernel fails to write shows in the tests.

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "gpu/accelerator.h"
#include "tensor/backend.h"
#include "tensor/capture.h"
#include "tensor/gpu/buffer_pool.h"
#include "tensor/gpu/fusion_plan.h"
#include "tensor/gpu/kernel_loader.h"
#include "tensor/gpu/launch_spec.h"

namespace nvhcq::tensor {

// A buffer in device memory (from the backend's pool).
class GpuBuffer final : public Buffer {
 public:
  GpuBuffer(Backend* backend, size_t bytes, std::unique_ptr<gpu::DeviceMemory> memory,
            BufferPool* pool)
      : Buffer(backend, bytes), memory_(std::move(memory)), pool_(pool) {}
  ~GpuBuffer() override { pool_->give_back(std::move(memory_)); }
  uint64_t va() const { return memory_->va(); }
  const gpu::DeviceMemory& memory() const { return *memory_; }

 private:
  std::unique_ptr<gpu::DeviceMemory> memory_;
  BufferPool* pool_;
};

// One launch with its buffers bound: what the backend queues and a Recording keeps.
struct BoundLaunch {
  struct Arg {
    std::shared_ptr<Buffer> buffer;  // null for a raw value
    uint64_t offset = 0;
    std::vector<uint8_t> bytes;
    bool written = false;  // the kernel writes this buffer (besides argument 0)
  };
  std::shared_ptr<gpu::Kernel> kernel;
  std::vector<Arg> args;
  gpu::LaunchDims dims;
  std::string what;
  bool flags_errors = false;
};

class GpuBackend final : public Backend, public CaptureBackend {
 public:
  GpuBackend(std::string name, std::unique_ptr<gpu::Accelerator> acc,
             std::unique_ptr<KernelLoader> loader);
  ~GpuBackend() override;

  const std::string& name() const override { return name_; }
  bool supports(DType t) const override { return t != DType::kF64; }
  std::shared_ptr<Buffer> allocate(size_t bytes) override;
  void copy_in(Buffer& dst, size_t offset, const void* src, size_t bytes) override;
  void copy_out(const Buffer& src, size_t offset, void* dst, size_t bytes) override;
  void execute(const Schedule& schedule) override;

  void begin_recording() override;
  std::unique_ptr<Recording> end_recording() override;
  bool recording() const override { return recording_ != nullptr; }

  gpu::Accelerator& accelerator() { return *acc_; }
  // Waits for every queued kernel; raises data-dependent errors they flagged.
  void synchronize();

  struct Stats {
    uint64_t schedules = 0, launches = 0, replays = 0;
  };
  const Stats& stats() const { return stats_; }
  size_t kernels_compiled() const { return loader_->compiled(); }

  static void set_poison_new_buffers(bool on);

  // For Recording: queues a bound launch and the replay of a graph.
  void launch(const BoundLaunch& l);
  void note_replay(bool flags_errors);

 private:
  class GpuRecording;
  BoundLaunch bind(const LaunchSpec& spec, std::shared_ptr<gpu::Kernel> kernel,
                   const std::unordered_map<const Node*, std::shared_ptr<Buffer>>& buffers);
  LaunchSpec lower(const PlannedKernel& k, const FusionPlan& plan) const;
  void check_error_flag();
  [[noreturn]] void rethrow_with_context(const Error& e) const;

  std::string name_;
  std::unique_ptr<gpu::Accelerator> acc_;
  std::unique_ptr<KernelLoader> loader_;
  BufferPool pool_;
  KernelTarget target_;
  std::shared_ptr<Buffer> error_flag_;
  bool error_check_pending_ = false;
  std::unique_ptr<GpuRecording> recording_;
  std::vector<std::string> recent_;  // kernels queued since the last synchronization
  Stats stats_;
};

// Opens the accelerator ("nv" or "cuda") and NVRTC; throws Error when either is missing.
std::unique_ptr<Backend> make_gpu_backend(const std::string& name);

}  // namespace nvhcq::tensor
