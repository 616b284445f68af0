#include "gpu/queue.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "gpu/device.h"
#include "gpu/hw/methods.h"

namespace nvhcq::gpu {
namespace {

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void put_u32(uint8_t* base, uint32_t off, uint32_t v) { std::memcpy(base + off, &v, 4); }
void put_u64(uint8_t* base, uint32_t off, uint64_t v) { std::memcpy(base + off, &v, 8); }

// The smallest SM carve-out (KiB) of arch that holds `bytes` of shared memory,
// or its largest.
uint32_t smallest_config_holding(const hw::ArchParams& arch, uint64_t bytes) {
  for (uint32_t kib : arch.shared_configs_kib) {
    if (kib != 0 && uint64_t{kib} * 1024 >= bytes) return kib;
  }
  return arch.shared_configs_kib.back();
}

// The carve-out a launch wants on its own: the smallest that holds as many of
// its CTAs as registers and threads let an SM run at once (so shared memory
// never lowers occupancy, and what it does not need stays L1 cache), as the
// CUDA driver chooses by default; or the one it asks for, if larger.
uint32_t wanted_carveout_kib(const hw::ArchParams& arch, const Program& p, const LaunchDims& dims) {
  const uint64_t threads = uint64_t{dims.block[0]} * dims.block[1] * dims.block[2];
  const uint64_t warps = (threads + 31) / 32;
  const uint64_t regs = std::max<uint32_t>(p.kernel().registers, 1);
  const uint64_t warp_regs = (regs * 32 + arch.register_alloc_unit - 1) / arch.register_alloc_unit * arch.register_alloc_unit;
  uint64_t ctas = std::min<uint64_t>(arch.max_ctas_per_sm, arch.max_threads_per_sm / std::max<uint64_t>(warps * 32, 1));
  ctas = std::min<uint64_t>(ctas, arch.registers_per_sm / std::max<uint64_t>(warp_regs * warps, 1));
  const uint32_t own = smallest_config_holding(arch, std::max<uint64_t>(ctas, 1) * p.shared_bytes(dims));
  if (dims.min_carveout_kib == 0) return own;
  return std::max(own, smallest_config_holding(arch, uint64_t{dims.min_carveout_kib} * 1024));
}

// Sets the QMD's shared-memory size and the SM carve-out: at least the smallest
// configuration that holds one CTA, at most the largest, and as target
// target_kib (or the smallest that holds one CTA, if larger).
void set_shared_memory(Qmd& q, const hw::ArchParams& arch, const Program& p, const LaunchDims& dims,
                       uint32_t target_kib) {
  const hw::QmdLayout& l = q.layout();
  const uint32_t shared_bytes = p.shared_bytes(dims);
  q.set(l.shared_memory_size, shared_bytes);
  const uint32_t min_kib = smallest_config_holding(arch, shared_bytes);
  // The encoding counts 4 KiB steps, plus one.
  q.set(l.min_sm_config_shared_mem_size, min_kib / 4 + 1);
  q.set(l.target_sm_config_shared_mem_size, std::max(min_kib, target_kib) / 4 + 1);
  q.set(l.max_sm_config_shared_mem_size, arch.shared_configs_kib.back() / 4 + 1);
}

}  // namespace

QueueCommands::Command& QueueCommands::command(size_t index, Kind expected, const char* what) {
  if (index >= commands_.size() || commands_[index].kind != expected) {
    throw Error(std::string("command ") + std::to_string(index) + " of the queue is not a " + what);
  }
  return commands_[index];
}

void QueueCommands::add_wait(uint64_t va, uint64_t value) {
  Command c{Kind::kWait};
  c.va = va;
  c.value = value;
  commands_.push_back(std::move(c));
}

void QueueCommands::add_signal(uint64_t va, uint64_t value) {
  Command c{Kind::kSignal};
  c.va = va;
  c.value = value;
  commands_.push_back(std::move(c));
}

void QueueCommands::update_wait(size_t index, uint64_t signal_va, uint64_t value) {
  Command& c = command(index, Kind::kWait, "wait");
  c.va = signal_va;
  c.value = value;
}

void QueueCommands::update_signal(size_t index, uint64_t signal_va, uint64_t value) {
  Command& c = command(index, Kind::kSignal, "signal");
  c.va = signal_va;
  c.value = value;
}

bool QueueCommands::encode_sync(Device& device, const Command& c, drv::Engine engine,
                                PushBuffer& pb) const {
  if (c.kind == Kind::kWait) {
    device.encode_acquire(pb, c.va, c.value);
    return true;
  }
  if (c.kind == Kind::kSignal) {
    device.encode_release(engine, pb, c.va, c.value);
    return true;
  }
  return false;
}

ComputeQueue& ComputeQueue::exec(const Program& program, const KernelArgs& args,
                                 const LaunchDims& dims, bool self_ordered) {
  program.check_launch(dims);
  Command c{Kind::kExec};
  c.self_ordered = self_ordered;
  c.program = &program;
  c.params = program.pack(args);
  c.dims = dims;
  commands_.push_back(std::move(c));
  return *this;
}

ComputeQueue& ComputeQueue::memory_barrier() {
  commands_.push_back(Command{Kind::kBarrier});
  return *this;
}

void ComputeQueue::update_exec(size_t index, const KernelArgs* args, const LaunchDims* dims) {
  Command& c = command(index, Kind::kExec, "launch");
  if (dims != nullptr) {
    c.program->check_launch(*dims);
    c.dims = *dims;
  }
  if (args != nullptr) c.params = c.program->pack(*args);
}

bool ComputeQueue::joins_run(size_t i) const {
  return i > 0 && i < commands_.size() && commands_[i].kind == Kind::kExec && commands_[i].self_ordered &&
         commands_[i - 1].kind == Kind::kExec;
}

std::vector<uint32_t> ComputeQueue::carveout_targets(const hw::ArchParams& arch) const {
  std::vector<uint32_t> kib(commands_.size(), 0);
  size_t run = 0;  // first launch of the current run
  uint32_t largest = 0;
  for (size_t i = 0; i <= commands_.size(); ++i) {
    const bool exec = i < commands_.size() && commands_[i].kind == Kind::kExec;
    if (!joins_run(i)) {
      for (size_t j = run; j < i; ++j) kib[j] = commands_[j].kind == Kind::kExec ? largest : 0;
      run = i;
      largest = 0;
    }
    if (exec) largest = std::max(largest, wanted_carveout_kib(arch, *commands_[i].program, commands_[i].dims));
  }
  return kib;
}

PushBuffer ComputeQueue::encode(Device& device) const {
  PushBuffer pb;
  if (device.take_code_upload()) {
    pb.method(hw::kSubchCompute, hw::compute::INVALIDATE_SHADER_CACHES_NO_WFI,
              {hw::compute::INVALIDATE_INSTRUCTION | hw::compute::INVALIDATE_GLOBAL_DATA |
               hw::compute::INVALIDATE_CONSTANT});
  }
  const hw::ArchParams& arch = device.arch();
  const hw::ShaderWindows& windows = device.windows();
  // The scheduler caches QMDs by address. SEND_PCAS invalidates the copy of the
  // QMD it names, but a chained QMD is fetched by the scheduler itself: once the
  // argument ring wraps, a chain could pick up a stale copy of an earlier QMD
  // that lived at the same address. Drop them all before this submission.
  bool has_launch = false;
  for (const Command& c : commands_) has_launch = has_launch || c.kind == Kind::kExec;
  if (has_launch) pb.method(hw::kSubchCompute, hw::compute::INVALIDATE_SKED_CACHES, {0});
  const std::vector<uint32_t> carveouts = carveout_targets(arch);
  uint8_t* previous_qmd_cpu = nullptr;  // set while the last command was a launch
  Qmd previous_qmd(*arch.qmd);
  bool launched_since_idle = false;

  for (size_t i = 0; i < commands_.size(); ++i) {
    const Command& c = commands_[i];
    if (encode_sync(device, c, drv::Engine::kCompute, pb)) {
      previous_qmd_cpu = nullptr;
      if (c.kind == Kind::kSignal) launched_since_idle = false;  // releases wait for idle
      continue;
    }
    if (c.kind == Kind::kBarrier) {
      pb.method(hw::kSubchCompute, hw::compute::INVALIDATE_SHADER_CACHES_NO_WFI,
                {hw::compute::INVALIDATE_GLOBAL_DATA | hw::compute::INVALIDATE_CONSTANT});
      previous_qmd_cpu = nullptr;
      continue;
    }
    const Program& p = *c.program;
    uint32_t cbuf_bytes = p.cbuf0_bytes();
    uint32_t cbuf_span = static_cast<uint32_t>(round_up(cbuf_bytes, 256));
    TimelineRing::Span span = device.kernargs().alloc(cbuf_span + arch.qmd->size_bytes, 256);

    // Constant bank 0: what the driver provides, then the parameters. Written
    // straight into the (write-combined) ring: no staging copy.
    uint8_t* cbuf = span.cpu;
    std::memset(cbuf, 0, p.param_base());
    for (int i = 0; i < 3; ++i) {
      put_u32(cbuf, arch.cbuf0_block_dim + 4 * i, c.dims.block[i]);
      put_u32(cbuf, arch.cbuf0_grid_dim + 4 * i, c.dims.grid[i]);
    }
    put_u64(cbuf, arch.cbuf0_shared_window, windows.shared);
    put_u64(cbuf, arch.cbuf0_local_window, windows.local);
    put_u32(cbuf, arch.cbuf0_stack_top, arch.stack_top_value);
    if (!c.params.empty()) std::memcpy(cbuf + p.param_base(), c.params.data(), c.params.size());

    Qmd qmd = p.qmd_template();
    // (A cluster launch's grid is in clusters; check_launch saw it divide.)
    const uint32_t* cluster = p.cluster_dims();
    qmd.set_grid(c.dims.grid[0] / cluster[0], c.dims.grid[1] / cluster[1],
                 c.dims.grid[2] / cluster[2]);
    qmd.set_block(c.dims.block[0], c.dims.block[1], c.dims.block[2]);
    set_shared_memory(qmd, arch, p, c.dims, carveouts[i]);
    qmd.set(qmd.layout().shader_local_memory_high_size, device.local_memory_per_thread());
    qmd.set_constant_buffer(0, span.va, cbuf_bytes);
    if (joins_run(i)) {
      // A self-ordered launch behind another launch keeps its caches: the
      // run's first launch has dropped what the CPU and the copy engine wrote
      // before the submission (this launch's constants among it: every
      // launch's are new ring memory, written before the submission), and
      // the launch starts before its inputs exist, so its kernels read what
      // the launches ahead write through L2 after their own acquire
      // (kernels/llm_chain.cuh). With the SMs' L1 and constant caches
      // invalidated as each launch started, decode on the H200 was 1.2-2.0%
      // slower, all of it the constant caches' (docs/perf-notes.md): the
      // blocks still running beside the new launch lose their job's lines.
      for (hw::QmdField f : qmd.layout().launch_cache_invalidations()) qmd.set(f, 0);
    }
    if (c.self_ordered && i + 1 < commands_.size() && commands_[i + 1].kind == Kind::kExec) {
      // As for a chained launch (below): a launch another follows ends with
      // a GPU-scope membar (8B Q4_K_M decode 0.2% faster on the H200).
      qmd.set(qmd.layout().cwd_membar_type, hw::kCwdMembarTypeL1Membar);
    }
    uint8_t* qmd_cpu = span.cpu + cbuf_span;
    uint64_t qmd_va = span.va + cbuf_span;
    std::memcpy(qmd_cpu, qmd.data(), qmd.size());

    if (previous_qmd_cpu != nullptr && !c.self_ordered) {
      // Chain: the previous launch schedules this one when it completes. Neither
      // has been submitted yet, so rewriting the previous QMD is safe. Its writes
      // need only be visible to this GPU's next kernel: a GPU-scope membar, not
      // the system-scope one a launch ending a submission keeps (the host may
      // read its results).
      previous_qmd.set(previous_qmd.layout().cwd_membar_type, hw::kCwdMembarTypeL1Membar);
      previous_qmd.chain_to(qmd_va);
      std::memcpy(previous_qmd_cpu, previous_qmd.data(), previous_qmd.size());
    } else {
      if (launched_since_idle && !c.self_ordered) {
        pb.method(hw::kSubchHost, hw::host::WFI, {hw::host::WFI_SCOPE_ALL});
      }
      pb.method(hw::kSubchCompute, hw::compute::SEND_PCAS_A, {static_cast<uint32_t>(qmd_va >> 8)});
      pb.method(hw::kSubchCompute, hw::compute::SEND_SIGNALING_PCAS2_B,
                {hw::compute::PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE});
    }
    previous_qmd = qmd;
    previous_qmd_cpu = qmd_cpu;
    launched_since_idle = true;
  }
  return pb;
}

uint64_t ComputeQueue::submit(Device& device) {
  PushBuffer pb = encode(device);
  return device.submit(drv::Engine::kCompute, pb);
}

CopyQueue& CopyQueue::copy(uint64_t dst_va, uint64_t src_va, uint64_t bytes) {
  Command c{Kind::kCopy};
  c.dst = dst_va;
  c.src = src_va;
  c.bytes = bytes;
  commands_.push_back(std::move(c));
  return *this;
}

void CopyQueue::update_copy(size_t index, uint64_t dst_va, uint64_t src_va, uint64_t bytes) {
  Command& c = command(index, Kind::kCopy, "copy");
  c.dst = dst_va;
  c.src = src_va;
  c.bytes = bytes;
}

PushBuffer CopyQueue::encode(Device& device) const {
  PushBuffer pb;
  for (const Command& c : commands_) {
    if (encode_sync(device, c, drv::Engine::kCopy, pb)) continue;
    for (uint64_t off = 0; off < c.bytes; off += hw::copy::kMaxLineBytes) {
      uint64_t n = std::min<uint64_t>(hw::copy::kMaxLineBytes, c.bytes - off);
      uint64_t src = c.src + off, dst = c.dst + off;
      pb.method(hw::kSubchCopy, hw::copy::OFFSET_IN_UPPER,
                {PushBuffer::hi(src), PushBuffer::lo(src), PushBuffer::hi(dst), PushBuffer::lo(dst)});
      pb.method(hw::kSubchCopy, hw::copy::LINE_LENGTH_IN, {static_cast<uint32_t>(n)});
      pb.method(hw::kSubchCopy, hw::copy::LAUNCH_DMA,
                {hw::copy::LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED |
                 hw::copy::LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH |
                 hw::copy::LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH});
    }
  }
  return pb;
}

uint64_t CopyQueue::submit(Device& device) {
  PushBuffer pb = encode(device);
  return device.submit(drv::Engine::kCopy, pb);
}

}  // namespace nvhcq::gpu
