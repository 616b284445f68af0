// The "nv" Accelerator: one in-order stream on gpu::Device. Launches collect in a
// compute queue (consecutive launches chain their QMDs) that is submitted when it
// grows long, before host copies and on synchronize. Device-to-device copies run
// as a kernel (the SMs move TB/s; one copy engine ~190 GB/s); copies that touch
// host memory use the copy engine, ordered against the compute work by a
// timeline signal.

#include <algorithm>
#include <cstring>
#include <map>

#include "base/error.h"
#include "compile/compiler.h"
#include "gpu/accelerator.h"
#include "gpu/device.h"
#include "gpu/queue.h"

namespace nvhcq::gpu {
namespace {

// Launches gathered before a submission: long enough to amortize the doorbell
// and the closing semaphore, short enough that the GPU starts early.
constexpr size_t kFlushLaunches = 256;

class NvMemory final : public DeviceMemory {
 public:
  NvMemory(Buffer buffer, uint64_t* counter, std::map<uint64_t, size_t>* host_ranges = nullptr)
      : buffer_(std::move(buffer)), counter_(counter), host_ranges_(host_ranges) {
    va_ = buffer_.va();
    size_ = buffer_.size();
    *counter_ += size_;
    if (host_ranges_ != nullptr) (*host_ranges_)[va_] = size_;
  }
  ~NvMemory() override {
    *counter_ -= size_;
    if (host_ranges_ != nullptr) host_ranges_->erase(va_);
  }
  const Buffer& buffer() const { return buffer_; }

 private:
  Buffer buffer_;
  uint64_t* counter_;
  std::map<uint64_t, size_t>* host_ranges_;
};

class NvKernel final : public Kernel {
 public:
  NvKernel(Device& device, const std::vector<uint8_t>& cubin, const std::string& name)
      : program_(device, cubin, name) {}
  const std::string& name() const override { return program_.name(); }
  uint32_t max_threads_per_block() const override { return program_.max_threads_per_block(); }
  uint32_t cluster_blocks() const override { return program_.cluster_dims()[0]; }
  const Program& program() const { return program_; }

 private:
  Program program_;
};

class NvGraph final : public Graph {
 public:
  // Command 0 waits for the stream's earlier work and the last command signals
  // the stream: both get this replay's values before each submission.
  NvGraph(const Signal& stream) { queue.wait(stream, 0); }
  ComputeQueue queue;
  std::vector<size_t> launch_commands;  // queue command index of each launch
  size_t launches() const override { return launch_commands.size(); }
  void set_args(size_t i, const KernelArgs& args) override {
    if (i >= launch_commands.size()) throw Error("graph has no launch " + std::to_string(i));
    queue.update_exec(launch_commands[i], &args, nullptr);
  }
};

class NvAccelerator final : public Accelerator {
 public:
  explicit NvAccelerator(int index) : dev_(Device::open(index)), stream_(dev_->new_signal(0)) {
    compile::CompileOptions o;
    o.arch = dev_->info().arch();
    auto module = compile::compile_embedded("memory.cu", o);
    copy_kernel_ = std::make_unique<Program>(*dev_, module.cubin, "copy_bytes");
  }
  ~NvAccelerator() override {
    try {
      synchronize();
    } catch (const std::exception&) {
      // The device reports its own fault on close.
    }
  }

  std::string backend() const override { return "nv"; }
  std::string device_name() const override { return dev_->info().name; }
  std::string arch() const override { return dev_->info().arch(); }
  uint32_t sm_count() const override { return dev_->info().sm_count(); }
  uint64_t memory_bytes() const override { return dev_->info().memory_bytes; }
  uint64_t allocated_bytes() const override { return allocated_; }

  std::unique_ptr<DeviceMemory> alloc(size_t bytes) override {
    return std::make_unique<NvMemory>(dev_->alloc(bytes), &allocated_);
  }
  std::unique_ptr<DeviceMemory> alloc_host(size_t bytes, void** cpu) override {
    auto m = std::make_unique<NvMemory>(dev_->alloc_host(bytes), &host_allocated_, &host_ranges_);
    *cpu = m->buffer().cpu();
    return m;
  }

  void upload(const DeviceMemory& dst, size_t off, const void* src, size_t bytes) override {
    synchronize();  // the stream's earlier work may still use dst
    dev_->upload(as_nv(dst).buffer(), off, src, bytes);
  }
  void download(void* dst, const DeviceMemory& src, size_t off, size_t bytes) override {
    synchronize();
    dev_->download(dst, as_nv(src).buffer(), off, bytes);
  }

  std::unique_ptr<Kernel> load(const std::vector<uint8_t>& cubin, const std::string& name) override {
    return std::make_unique<NvKernel>(*dev_, cubin, name);
  }

  void launch(const Kernel& kernel, const KernelArgs& args, const LaunchDims& dims) override {
    queue_launch(kernel, args, dims, false);
  }
  void launch_self_ordered(const Kernel& kernel, const KernelArgs& args, const LaunchDims& dims) override {
    queue_launch(kernel, args, dims, true);
  }

  void copy(uint64_t dst, uint64_t src, size_t bytes) override {
    if (bytes == 0) return;
    if (is_host(dst) || is_host(src)) {
      if (capture_) throw Error("nv graphs capture launches and device copies, not host copies");
      flush();
      CopyQueue().wait(stream_, stream_value_).copy(dst, src, bytes).signal(stream_, stream_value_ + 1)
          .submit(*dev_);
      ++stream_value_;
      // The next compute work waits for the copy.
      pending_.wait(stream_, stream_value_);
      return;
    }
    KernelArgs a;
    a.ptr(dst).ptr(src).add(static_cast<unsigned long long>(bytes));
    LaunchDims d;
    uint64_t vectors = (bytes + 15) / 16;
    d.block[0] = 256;
    d.grid[0] = static_cast<uint32_t>(std::clamp<uint64_t>((vectors + 255) / 256, 1, sm_count() * 8ull));
    ComputeQueue& q = capture_ ? capture_->queue : pending_;
    q.exec(*copy_kernel_, a, d);
    if (!capture_) ++pending_launches_;
  }

  void synchronize() override {
    flush();
    dev_->wait(stream_, stream_value_);
    dev_->check_errors();
  }

  TimePoint record_time() override {
    if (capture_) throw Error("time points cannot be recorded inside a graph capture");
    stamps_.push_back(dev_->new_signal(0));
    pending_.timestamp(stamps_.back());
    return TimePoint{stamps_.size() - 1};
  }
  double elapsed_ms(TimePoint from, TimePoint to) override {
    if (from.handle >= stamps_.size() || to.handle >= stamps_.size()) throw Error("unknown time point");
    return static_cast<double>(stamps_[to.handle].timestamp() - stamps_[from.handle].timestamp()) / 1e6;
  }

  void begin_capture() override {
    if (capture_) throw Error("a graph capture is already running");
    capture_ = std::make_unique<NvGraph>(stream_);
  }
  std::unique_ptr<Graph> end_capture() override {
    if (!capture_) throw Error("end_capture without begin_capture");
    capture_->queue.signal(stream_, 0);
    return std::move(capture_);
  }
  void replay(Graph& graph) override {
    flush();
    auto& g = static_cast<NvGraph&>(graph);
    // The recorded launches follow the stream's earlier work, and later work follows them.
    g.queue.update_wait(0, stream_.va(), stream_value_);
    g.queue.update_signal(g.queue.size() - 1, stream_.va(), stream_value_ + 1);
    g.queue.submit(*dev_);
    ++stream_value_;
  }

 private:
  static const NvMemory& as_nv(const DeviceMemory& m) { return static_cast<const NvMemory&>(m); }
  bool is_host(uint64_t va) const {
    auto it = host_ranges_.upper_bound(va);
    if (it == host_ranges_.begin()) return false;
    --it;
    return va < it->first + it->second;
  }

  void queue_launch(const Kernel& kernel, const KernelArgs& args, const LaunchDims& dims, bool self_ordered) {
    const Program& p = static_cast<const NvKernel&>(kernel).program();
    ComputeQueue& q = capture_ ? capture_->queue : pending_;
    if (capture_) capture_->launch_commands.push_back(q.size());
    q.exec(p, args, dims, self_ordered);
    if (!capture_ && ++pending_launches_ >= kFlushLaunches) flush();
  }

  void flush() {
    if (pending_.size() == 0) return;
    pending_.signal(stream_, ++stream_value_);
    pending_.submit(*dev_);
    pending_.clear();
    pending_launches_ = 0;
  }

  std::unique_ptr<Device> dev_;
  Signal stream_;
  uint64_t stream_value_ = 0;
  ComputeQueue pending_;
  size_t pending_launches_ = 0;
  std::unique_ptr<Program> copy_kernel_;
  std::unique_ptr<NvGraph> capture_;
  std::vector<Signal> stamps_;
  uint64_t allocated_ = 0, host_allocated_ = 0;
  std::map<uint64_t, size_t> host_ranges_;  // va -> size of alloc_host memory
};

}  // namespace

std::unique_ptr<Accelerator> open_nv(int index) { return std::make_unique<NvAccelerator>(index); }

}  // namespace nvhcq::gpu
