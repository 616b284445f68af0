// The "cuda" Accelerator: the CUDA driver API on the device's primary context,
// one non-blocking stream, CUDA graphs by stream capture. The reference the nv
// path is compared against.

#include "cuda/cuda_accelerator.h"

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "cuda/cuda_api.h"

namespace nvhcq::cuda {
namespace {

using gpu::DeviceMemory;
using gpu::KernelArgs;
using gpu::LaunchDims;

class CudaMemory final : public DeviceMemory {
 public:
  CudaMemory(const CudaApi& api, size_t bytes, bool host, uint64_t* counter)
      : api_(api), host_(host), counter_(counter) {
    if (host) {
      check(api.cuMemAllocHost(&host_ptr_, bytes), "cuMemAllocHost");
      va_ = reinterpret_cast<uint64_t>(host_ptr_);  // unified addressing: the same address
    } else {
      CUdeviceptr p = 0;
      CUresult rc = api.cuMemAlloc(&p, bytes);
      if (rc == 2) throw OutOfMemoryError("cuMemAlloc of " + std::to_string(bytes) + " bytes", "cuMemAlloc", rc);
      check(rc, "cuMemAlloc");
      va_ = p;
    }
    size_ = bytes;
    *counter_ += bytes;
  }
  ~CudaMemory() override {
    *counter_ -= size_;
    if (host_) {
      api_.cuMemFreeHost(host_ptr_);
    } else {
      api_.cuMemFree(va_);
    }
  }
  void* host_ptr() const { return host_ptr_; }

 private:
  const CudaApi& api_;
  bool host_;
  void* host_ptr_ = nullptr;
  uint64_t* counter_;
};

class CudaKernel final : public gpu::Kernel {
 public:
  CudaKernel(const CudaApi& api, const std::vector<uint8_t>& cubin, const std::string& name)
      : api_(api), name_(name) {
    check(api.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
    CUresult rc = api.cuModuleGetFunction(&fn_, module_, name.c_str());
    if (rc != CUDA_SUCCESS) {
      api.cuModuleUnload(module_);
      check(rc, ("cuModuleGetFunction " + name).c_str());
    }
    api.cuFuncGetAttribute(&max_threads_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn_);
    api.cuFuncGetAttribute(&static_shared_, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn_);
    // Compile-time cluster dimensions: cuLaunchKernel launches such a kernel
    // in clusters by itself.
    api.cuFuncGetAttribute(&cluster_width_, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fn_);
  }
  ~CudaKernel() override { api_.cuModuleUnload(module_); }
  const std::string& name() const override { return name_; }
  uint32_t max_threads_per_block() const override { return static_cast<uint32_t>(max_threads_); }
  uint32_t cluster_blocks() const override {
    return cluster_width_ > 1 ? static_cast<uint32_t>(cluster_width_) : 1;
  }
  CUfunction function() const { return fn_; }
  // Shared memory the kernel declares itself (the launch adds its dynamic part).
  uint32_t static_shared_bytes() const { return static_cast<uint32_t>(static_shared_); }
  // The SM carve-out this kernel's launches prefer, in percent of the largest
  // (-1: the driver's own choice). A function attribute: set only when a
  // launch asks for another than the last.
  void prefer_carveout(int percent) const {
    if (percent == carveout_percent_) return;
    check(api_.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent),
          "cuFuncSetAttribute");
    carveout_percent_ = percent;
  }

 private:
  const CudaApi& api_;
  std::string name_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  int max_threads_ = 0;
  mutable int carveout_percent_ = -1;
  int static_shared_ = 0;
  int cluster_width_ = 0;
};

// What a graph recorded, so it can be captured again when arguments change.
struct RecordedOp {
  const CudaKernel* kernel = nullptr;  // null for a copy
  KernelArgs args;
  LaunchDims dims;
  uint64_t dst = 0, src = 0, bytes = 0;
};

class CudaGraph final : public gpu::Graph {
 public:
  explicit CudaGraph(const CudaApi& api) : api_(api) {}
  ~CudaGraph() override { release(); }
  size_t launches() const override { return launch_ops.size(); }
  void set_args(size_t i, const KernelArgs& args) override {
    if (i >= launch_ops.size()) throw Error("graph has no launch " + std::to_string(i));
    ops[launch_ops[i]].args = args;
    dirty = true;
  }
  void release() {
    if (exec != nullptr) api_.cuGraphExecDestroy(exec);
    if (graph != nullptr) api_.cuGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
  }

  const CudaApi& api_;
  std::vector<RecordedOp> ops;
  std::vector<size_t> launch_ops;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  bool dirty = false;
};

class CudaAccelerator final : public gpu::Accelerator {
 public:
  explicit CudaAccelerator(int index) : api_(cuda()) {
    check(api_.cuDeviceGet(&device_, index), "cuDeviceGet");
    check(api_.cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
    check(api_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    check(api_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    char name[256] = {0};
    api_.cuDeviceGetName(name, sizeof(name), device_);
    name_ = name;
    int major = 0, minor = 0, sms = 0, shared_per_sm = 0;
    api_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_);
    api_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_);
    api_.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_);
    api_.cuDeviceGetAttribute(&shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device_);
    shared_per_sm_ = static_cast<uint32_t>(shared_per_sm);
    arch_ = "sm_" + std::to_string(major) + std::to_string(minor);
    sm_count_ = static_cast<uint32_t>(sms);
    size_t mem = 0;
    api_.cuDeviceTotalMem(&mem, device_);
    memory_ = mem;
  }
  ~CudaAccelerator() override {
    api_.cuCtxSetCurrent(ctx_);
    api_.cuStreamSynchronize(stream_);
    for (CUevent e : events_) api_.cuEventDestroy(e);
    api_.cuStreamDestroy(stream_);
    api_.cuDevicePrimaryCtxRelease(device_);
  }

  std::string backend() const override { return "cuda"; }
  std::string device_name() const override { return name_; }
  std::string arch() const override { return arch_; }
  uint32_t sm_count() const override { return sm_count_; }
  uint64_t memory_bytes() const override { return memory_; }
  uint64_t allocated_bytes() const override { return allocated_; }

  std::unique_ptr<DeviceMemory> alloc(size_t bytes) override {
    current();
    return std::make_unique<CudaMemory>(api_, bytes, false, &allocated_);
  }
  std::unique_ptr<DeviceMemory> alloc_host(size_t bytes, void** cpu) override {
    current();
    auto m = std::make_unique<CudaMemory>(api_, bytes, true, &host_allocated_);
    *cpu = m->host_ptr();
    return m;
  }
  void upload(const DeviceMemory& dst, size_t off, const void* src, size_t bytes) override {
    check_range(dst, off, bytes);
    current();
    // On our stream, then waited for: a synchronous cuMemcpyHtoD from pageable
    // memory returns once the data is staged, unordered with a non-blocking stream.
    check(api_.cuMemcpyHtoDAsync(dst.va() + off, src, bytes, stream_), "cuMemcpyHtoDAsync");
    check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }
  void download(void* dst, const DeviceMemory& src, size_t off, size_t bytes) override {
    check_range(src, off, bytes);
    current();
    check(api_.cuMemcpyDtoHAsync(dst, src.va() + off, bytes, stream_), "cuMemcpyDtoHAsync");
    check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

  std::unique_ptr<gpu::Kernel> load(const std::vector<uint8_t>& cubin, const std::string& name) override {
    current();
    return std::make_unique<CudaKernel>(api_, cubin, name);
  }

  void launch(const gpu::Kernel& kernel, const KernelArgs& args, const LaunchDims& d) override {
    const auto& k = static_cast<const CudaKernel&>(kernel);
    if (capture_) {
      capture_->launch_ops.push_back(capture_->ops.size());
      capture_->ops.push_back(RecordedOp{&k, args, d, 0, 0, 0});
    }
    issue_launch(k, args, d);
  }
  void copy(uint64_t dst, uint64_t src, size_t bytes) override {
    if (bytes == 0) return;
    if (capture_) capture_->ops.push_back(RecordedOp{nullptr, KernelArgs(), LaunchDims{}, dst, src, bytes});
    current();
    check(api_.cuMemcpyAsync(dst, src, bytes, stream_), "cuMemcpyAsync");
  }
  void synchronize() override {
    current();
    check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

  gpu::TimePoint record_time() override {
    current();
    CUevent e;
    check(api_.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    events_.push_back(e);
    check(api_.cuEventRecord(e, stream_), "cuEventRecord");
    return gpu::TimePoint{events_.size() - 1};
  }
  double elapsed_ms(gpu::TimePoint from, gpu::TimePoint to) override {
    if (from.handle >= events_.size() || to.handle >= events_.size()) throw Error("unknown time point");
    float ms = 0;
    check(api_.cuEventElapsedTime(&ms, events_[from.handle], events_[to.handle]), "cuEventElapsedTime");
    return ms;
  }

  void begin_capture() override {
    if (capture_) throw Error("a graph capture is already running");
    current();
    capture_ = std::make_unique<CudaGraph>(api_);
    check(api_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  }
  std::unique_ptr<gpu::Graph> end_capture() override {
    if (!capture_) throw Error("end_capture without begin_capture");
    current();
    check(api_.cuStreamEndCapture(stream_, &capture_->graph), "cuStreamEndCapture");
    check(api_.cuGraphInstantiateWithFlags(&capture_->exec, capture_->graph, 0),
          "cuGraphInstantiateWithFlags");
    return std::move(capture_);
  }
  void replay(gpu::Graph& graph) override {
    auto& g = static_cast<CudaGraph&>(graph);
    current();
    if (g.dirty) {
      // New arguments: capture the recorded work again.
      g.release();
      check(api_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
      for (const auto& op : g.ops) {
        if (op.kernel != nullptr) {
          issue_launch(*op.kernel, op.args, op.dims);
        } else {
          check(api_.cuMemcpyAsync(op.dst, op.src, op.bytes, stream_), "cuMemcpyAsync");
        }
      }
      check(api_.cuStreamEndCapture(stream_, &g.graph), "cuStreamEndCapture");
      check(api_.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0), "cuGraphInstantiateWithFlags");
      g.dirty = false;
    }
    check(api_.cuGraphLaunch(g.exec, stream_), "cuGraphLaunch");
  }

 private:
  void current() { api_.cuCtxSetCurrent(ctx_); }
  static void check_range(const DeviceMemory& m, size_t off, size_t bytes) {
    if (off > m.size() || bytes > m.size() - off) {
      throw Error("copy of " + std::to_string(bytes) + " bytes at " + std::to_string(off) +
                  " overruns a " + std::to_string(m.size()) + "-byte buffer");
    }
  }
  void issue_launch(const CudaKernel& k, const KernelArgs& args, const LaunchDims& d) {
    current();
    std::vector<void*> params;
    params.reserve(args.count());
    for (const auto& a : args.args()) params.push_back(const_cast<uint8_t*>(a.bytes));
    // Past 48 KiB in all, a CTA's shared memory must be opted into.
    if (k.static_shared_bytes() + d.dynamic_shared_bytes > 48 * 1024) {
      check(api_.cuFuncSetAttribute(k.function(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(d.dynamic_shared_bytes)),
            "cuFuncSetAttribute");
    }
    // A carve-out asked for, as the percentage of the largest the driver
    // takes (rounded up here, and by the driver to a configuration the SM has).
    int percent = -1;
    if (d.min_carveout_kib != 0 && shared_per_sm_ != 0) {
      const uint64_t bytes = uint64_t{d.min_carveout_kib} * 1024;
      percent = static_cast<int>(std::min<uint64_t>(100, (bytes * 100 + shared_per_sm_ - 1) / shared_per_sm_));
    }
    k.prefer_carveout(percent);
    check(api_.cuLaunchKernel(k.function(), d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1],
                              d.block[2], d.dynamic_shared_bytes, stream_, params.data(), nullptr),
          ("cuLaunchKernel " + k.name()).c_str());
  }

  const CudaApi& api_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  std::string name_, arch_;
  uint32_t sm_count_ = 0;
  uint32_t shared_per_sm_ = 0;  // bytes, the largest carve-out
  uint64_t memory_ = 0, allocated_ = 0, host_allocated_ = 0;
  std::vector<CUevent> events_;
  std::unique_ptr<CudaGraph> capture_;
};

}  // namespace

std::unique_ptr<gpu::Accelerator> open_cuda(int index) { return std::make_unique<CudaAccelerator>(index); }

std::unique_ptr<gpu::Accelerator> open_accelerator(const std::string& backend, int index) {
  if (backend == "nv") return gpu::open_nv(index);
  if (backend == "cuda") return open_cuda(index);
  throw Error("unknown GPU backend '" + backend + "' (nv or cuda)");
}

}  // namespace nvhcq::cuda
