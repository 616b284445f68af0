#include "tensor/gpu/gpu_backend.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "base/error.h"
#include "base/log.h"
#include "compile/nvrtc_api.h"
#include "cuda/cuda_accelerator.h"
#include "kernels/embedded.h"
#include "tensor/gpu/fused_kernels.h"
#include "tensor/gpu/library_kernels.h"

namespace nvhcq::tensor {
namespace {

constexpr size_t kRecentKernels = 16;

std::atomic<bool>& poison_flag() {
  static std::atomic<bool> flag{[] {
    const char* env = std::getenv("NVHCQ_POISON_BUFFERS");
    return env != nullptr && std::string(env) == "1";
  }()};
  return flag;
}

const GpuBuffer& as_gpu(const Buffer& b, const Backend* owner) {
  if (&b.backend() != owner)
    throw Error("a buffer of device '" + b.backend().name() + "' was passed to the '" +
                owner->name() + "' backend");
  return static_cast<const GpuBuffer&>(b);
}

void check_range(const Buffer& b, size_t offset, size_t bytes, const char* what) {
  if (offset > b.bytes() || bytes > b.bytes() - offset) {
    throw Error(std::string(what) + ": " + std::to_string(bytes) + " bytes at offset " +
                std::to_string(offset) + " exceed a buffer of " + std::to_string(b.bytes()) +
                " bytes");
  }
}

gpu::KernelArgs make_args(const std::vector<BoundLaunch::Arg>& args, const Backend* owner) {
  gpu::KernelArgs k;
  for (const auto& a : args) {
    if (a.buffer) {
      k.ptr(as_gpu(*a.buffer, owner).va() + a.offset);
    } else {
      gpu::KernelArgs::Arg raw{};
      std::memcpy(raw.bytes, a.bytes.data(), a.bytes.size());
      raw.size = static_cast<uint32_t>(a.bytes.size());
      k.add<uint8_t>(0);
      k.set(k.count() - 1, raw);
    }
  }
  return k;
}

}  // namespace

// ---- recording -------------------------------------------------------------------

class GpuBackend::GpuRecording final : public Recording {
 public:
  explicit GpuRecording(GpuBackend& backend) : backend_(backend) {}

  void add(const BoundLaunch& l) {
    Launch r;
    r.kernel = l.kernel;
    r.dims = l.dims;
    r.flags_errors = l.flags_errors;
    for (size_t i = 0; i < l.args.size(); ++i) {
      const auto& a = l.args[i];
      Arg arg;
      arg.offset = a.offset;
      arg.bytes = a.bytes;
      if (a.buffer) {
        arg.slot = static_cast<int>(slot_for(a.buffer));
        arg.written = i == 0 || a.written;
        if (arg.written) written_[arg.slot] = true;
      }
      r.args.push_back(std::move(arg));
    }
    flags_errors_ = flags_errors_ || l.flags_errors;
    launches_.push_back(std::move(r));
  }
  void mark_read_back() { read_back_ = true; }

  size_t launches() const override { return launches_.size(); }
  size_t slots() const override { return slots_.size(); }
  std::optional<size_t> slot_of(const Buffer* b) const override {
    for (size_t s = 0; s < slots_.size(); ++s)
      if (slots_[s].get() == b) return s;
    return std::nullopt;
  }
  const std::shared_ptr<Buffer>& slot_buffer(size_t slot) const override { return slots_.at(slot); }
  bool slot_written(size_t slot) const override { return written_.at(slot); }
  void set_slot(size_t slot, std::shared_ptr<Buffer> buffer) override {
    if (slots_.at(slot) == buffer) return;
    if (!buffer || buffer->bytes() < slots_[slot]->bytes()) {
      throw Error("internal: a recording slot of " + std::to_string(slots_[slot]->bytes()) +
                  " bytes rebound to a smaller buffer");
    }
    as_gpu(*buffer, &backend_);
    slots_[slot] = std::move(buffer);
    dirty_[slot] = true;
  }
  bool read_back() const override { return read_back_; }

  void freeze_constants(const std::vector<size_t>& input_slots,
                        const std::vector<size_t>& output_slots) override {
    if (graph_) throw Error("internal: freeze_constants after the first replay");
    std::vector<bool> variable(slots_.size(), false), output(slots_.size(), false);
    for (size_t s : input_slots) variable.at(s) = true;
    for (size_t s : output_slots) output.at(s) = true;
    for (auto& l : launches_) {
      bool reads_variable = false, writes_output = false;
      for (size_t i = 0; i < l.args.size(); ++i) {
        const int s = l.args[i].slot;
        if (s < 0) continue;
        if (l.args[i].written)
          writes_output = writes_output || output[s];
        else
          reads_variable = reads_variable || variable[s];
      }
      l.frozen = !reads_variable && !writes_output;
      if (!l.frozen) {
        for (const auto& a : l.args) {
          if (a.slot >= 0 && a.written) variable[a.slot] = true;
        }
      }
    }
  }
  size_t replayed_launches() const override {
    size_t n = 0;
    for (const auto& l : launches_) n += l.frozen ? 0 : 1;
    return n;
  }

  void replay() override {
    gpu::Accelerator& acc = backend_.accelerator();
    if (!graph_) {
      acc.begin_capture();
      try {
        for (const auto& l : launches_) {
          if (!l.frozen) acc.launch(*l.kernel, args_of(l), l.dims);
        }
      } catch (...) {
        try {
          (void)acc.end_capture();
        } catch (...) {
        }
        throw;
      }
      graph_ = acc.end_capture();
    } else {
      size_t index = 0;  // position among the replayed launches
      for (const auto& l : launches_) {
        if (l.frozen) continue;
        bool changed = false;
        for (const auto& a : l.args) changed = changed || (a.slot >= 0 && dirty_[a.slot]);
        if (changed) graph_->set_args(index, args_of(l));
        ++index;
      }
    }
    std::fill(dirty_.begin(), dirty_.end(), false);
    acc.replay(*graph_);
    backend_.note_replay(flags_errors_);
  }

 private:
  struct Arg {
    int slot = -1;
    bool written = false;
    uint64_t offset = 0;
    std::vector<uint8_t> bytes;
  };
  struct Launch {
    std::shared_ptr<gpu::Kernel> kernel;
    std::vector<Arg> args;
    gpu::LaunchDims dims;
    bool flags_errors = false;
    bool frozen = false;  // ran during the recording; left out of replays
  };

  size_t slot_for(const std::shared_ptr<Buffer>& b) {
    for (size_t s = 0; s < slots_.size(); ++s)
      if (slots_[s] == b) return s;
    slots_.push_back(b);
    written_.push_back(false);
    dirty_.push_back(false);
    return slots_.size() - 1;
  }

  gpu::KernelArgs args_of(const Launch& l) const {
    std::vector<BoundLaunch::Arg> bound;
    for (const auto& a : l.args) {
      BoundLaunch::Arg b;
      if (a.slot >= 0) b.buffer = slots_[a.slot];
      b.offset = a.offset;
      b.bytes = a.bytes;
      bound.push_back(std::move(b));
    }
    return make_args(bound, &backend_);
  }

  GpuBackend& backend_;
  std::vector<Launch> launches_;
  std::vector<std::shared_ptr<Buffer>> slots_;
  std::vector<bool> written_, dirty_;
  std::unique_ptr<gpu::Graph> graph_;
  bool read_back_ = false, flags_errors_ = false;
};

// ---- the backend -------------------------------------------------------------------

GpuBackend::GpuBackend(std::string name, std::unique_ptr<gpu::Accelerator> acc,
                       std::unique_ptr<KernelLoader> loader)
    : name_(std::move(name)), acc_(std::move(acc)), loader_(std::move(loader)), pool_(*acc_) {
  target_.sm_count = std::max<uint32_t>(1, acc_->sm_count());
  // mma.sync m16n8k16 (f16 and bf16) needs sm_80 or later; NVHCQ_TENSOR_MMA=0 turns it off.
  const std::string arch = acc_->arch();
  const char* mma_env = std::getenv("NVHCQ_TENSOR_MMA");
  const bool mma_allowed = mma_env == nullptr || std::string(mma_env) != "0";
  target_.tensor_core_gemm =
      mma_allowed && arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 80;
  error_flag_ = allocate(4);
  const uint32_t zero = 0;
  copy_in(*error_flag_, 0, &zero, 4);
}

GpuBackend::~GpuBackend() {
  try {
    acc_->synchronize();
  } catch (const std::exception&) {
    // A fault was reported (or will be) by the operation that caused it.
  }
}

void GpuBackend::set_poison_new_buffers(bool on) {
  poison_flag().store(on);
}

std::shared_ptr<Buffer> GpuBackend::allocate(size_t bytes) {
  auto memory = pool_.take(std::max<size_t>(bytes, 1));
  auto buffer = std::make_shared<GpuBuffer>(this, bytes, std::move(memory), &pool_);
  if (poison_flag().load(std::memory_order_relaxed) && bytes > 0) {
    static const LaunchSpec fill = [] {
      LaunchSpec s;
      s.file = "tensor_fill.cu";
      s.source = std::string(kernels::embedded_source("tensor_fill.cu"));
      s.entry = "nvt_fill_u32";
      s.what = "poison fill";
      return s;
    }();
    auto kernel = loader_->load_all({&fill}).at(0);
    const uint64_t words = buffer->memory().size() / 4;
    gpu::LaunchDims d;
    d.block[0] = 256;
    d.grid[0] = static_cast<uint32_t>(std::clamp<uint64_t>((words + 255) / 256, 1, 4096));
    // Not recorded: a replay need not poison again.
    acc_->launch(
        *kernel,
        gpu::KernelArgs().ptr(buffer->va()).add(0x7F7F7F7Fu).add<unsigned long long>(words), d);
  }
  return buffer;
}

void GpuBackend::copy_in(Buffer& dst, size_t offset, const void* src, size_t bytes) {
  check_range(dst, offset, bytes, "copy_in");
  if (bytes == 0) return;
  try {
    acc_->upload(as_gpu(dst, this).memory(), offset, src, bytes);
  } catch (const GpuFaultError& e) {
    rethrow_with_context(e);
  }
  recent_.clear();
}

void GpuBackend::copy_out(const Buffer& src, size_t offset, void* dst, size_t bytes) {
  check_range(src, offset, bytes, "copy_out");
  if (recording_) recording_->mark_read_back();
  if (bytes > 0) {
    try {
      acc_->download(dst, as_gpu(src, this).memory(), offset, bytes);
    } catch (const Error& e) {
      rethrow_with_context(e);
    }
  }
  recent_.clear();
  check_error_flag();
}

void GpuBackend::synchronize() {
  try {
    acc_->synchronize();
  } catch (const Error& e) {
    rethrow_with_context(e);
  }
  recent_.clear();
  check_error_flag();
}

void GpuBackend::check_error_flag() {
  if (!error_check_pending_) return;
  error_check_pending_ = false;
  uint32_t flag = 0;
  const auto& mem = as_gpu(*error_flag_, this).memory();
  acc_->download(&flag, mem, 0, 4);
  if (flag == 0) return;
  const uint32_t zero = 0;
  acc_->upload(mem, 0, &zero, 4);
  const char* op = flag == 2 ? "scatter_add" : "gather";
  throw Error(std::string(op) +
              ": an index is out of range for the indexed axis (found by a kernel on '" + name_ +
              "'; the CPU backend names the index)");
}

void GpuBackend::rethrow_with_context(const Error& e) const {
  std::string what = e.what();
  if (!recent_.empty()) {
    what += "\n  kernels queued since the last synchronization (latest last):";
    for (const auto& k : recent_) what += "\n    " + k;
  }
  throw GpuFaultError(what, e.call(), e.status(), e.hint());
}

LaunchSpec GpuBackend::lower(const PlannedKernel& k, const FusionPlan& plan) const {
  return lower_kernel(k, plan, target_);
}

BoundLaunch GpuBackend::bind(
    const LaunchSpec& spec, std::shared_ptr<gpu::Kernel> kernel,
    const std::unordered_map<const Node*, std::shared_ptr<Buffer>>& buffers) {
  BoundLaunch l;
  l.kernel = std::move(kernel);
  l.dims = spec.dims;
  l.what = spec.entry + ": " + spec.what;
  for (const ArgSpec& a : spec.args) {
    BoundLaunch::Arg arg;
    switch (a.kind) {
      case ArgSpec::Kind::kBuffer: {
        auto it = buffers.find(a.node);
        if (it != buffers.end())
          arg.buffer = it->second;
        else if (a.node->realized())
          arg.buffer = a.node->buffer;
        else
          throw Error(std::string("internal: kernel ") + spec.entry + " reads an unrealized " +
                      op_name(a.node->op) + " node");
        arg.offset = a.byte_offset;
        break;
      }
      case ArgSpec::Kind::kScratch:
        arg.buffer = allocate(a.scratch_bytes);
        arg.written = true;
        break;
      case ArgSpec::Kind::kErrorFlag:
        arg.buffer = error_flag_;
        arg.written = true;
        l.flags_errors = true;
        break;
      case ArgSpec::Kind::kValue:
        arg.bytes = a.bytes;
        break;
    }
    l.args.push_back(std::move(arg));
  }
  return l;
}

void GpuBackend::launch(const BoundLaunch& l) {
  try {
    acc_->launch(*l.kernel, make_args(l.args, this), l.dims);
  } catch (const Error& e) {
    throw Error("launching " + l.what + " on '" + name_ + "' failed: " + e.what(), e.call(),
                e.status(), e.hint());
  }
  ++stats_.launches;
  log::debug(name_, " launch ", l.what, " grid ", l.dims.grid[0], "x", l.dims.grid[1], "x", l.dims.grid[2], " block ",
             l.dims.block[0]);
  if (l.flags_errors) error_check_pending_ = true;
  if (recent_.size() == kRecentKernels) recent_.erase(recent_.begin());
  recent_.push_back(l.what);
  if (recording_) recording_->add(l);
}

void GpuBackend::note_replay(bool flags_errors) {
  ++stats_.replays;
  if (flags_errors) error_check_pending_ = true;
  if (recent_.size() == kRecentKernels) recent_.erase(recent_.begin());
  recent_.push_back("(a captured graph)");
}

void GpuBackend::execute(const Schedule& schedule) {
  ++stats_.schedules;
  const FusionPlan plan = plan_fusion(schedule, target_);
  log::debug(name_, ": a schedule of ", schedule.nodes.size(), " nodes becomes ", plan.kernels.size(), " kernels");
  std::unordered_map<const Node*, std::shared_ptr<Buffer>> buffers;
  std::vector<LaunchSpec> specs;
  for (const auto& k : plan.kernels) {
    const Node* r = k.root.get();
    buffers[r] = allocate(static_cast<size_t>(numel(r->shape)) * dtype_size(r->dtype));
    if (numel(r->shape) > 0) specs.push_back(lower(k, plan));
  }
  std::vector<const LaunchSpec*> pointers;
  for (const auto& s : specs) pointers.push_back(&s);
  const auto kernels = loader_->load_all(pointers);
  for (size_t i = 0; i < specs.size(); ++i) launch(bind(specs[i], kernels[i], buffers));
  std::unordered_set<const Node*> synthetic;
  for (const auto& n : plan.synthetic) synthetic.insert(n.get());
  for (const auto& k : plan.kernels) {
    if (!synthetic.count(k.root.get())) k.root->set_realized(buffers.at(k.root.get()));
  }
}

void GpuBackend::begin_recording() {
  if (recording_)
    throw Error("the '" + name_ +
                "' backend is already recording (a Jit cannot run inside another Jit's capture)");
  recording_ = std::make_unique<GpuRecording>(*this);
}

std::unique_ptr<Recording> GpuBackend::end_recording() {
  if (!recording_) throw Error("internal: end_recording without begin_recording");
  return std::move(recording_);
}

std::unique_ptr<Backend> make_gpu_backend(const std::string& name) {
  if (!compile::nvrtc_available()) {
    throw Error(
        "the '" + name +
            "' tensor backend needs NVRTC to compile its kernels, and NVRTC is not installed",
        {}, 0, "install the CUDA toolkit's NVRTC, or set CUDA_HOME to a toolkit");
  }
  std::unique_ptr<gpu::Accelerator> acc = cuda::open_accelerator(name);
  auto loader = make_nvrtc_loader(*acc);
  return std::make_unique<GpuBackend>(name, std::move(acc), std::move(loader));
}

}  // namespace nvhcq::tensor
