#pragma once
// Hardware command queues. A queue records commands (wait, signal, launches,
// copies, barriers), can have their values updated after recording, and is
// encoded afresh into the device's rings on every submit: memory the GPU may
// still be reading is never rewritten.
//
// Order: commands of a queue run in order. Consecutive launches are chained
// (each QMD schedules the next when it completes); a launch after other
// commands waits for the engine to be idle first. Self-ordered launches are
// the exception: they start as soon as the GPU takes them.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "drv/driver_iface.h"
#include "gpu/kernel_args.h"
#include "gpu/program.h"
#include "gpu/pushbuffer.h"
#include "gpu/signal.h"

namespace nvhcq::gpu {
namespace hw {
struct ArchParams;
}

class Device;

// The recorded commands of a queue, shared by both kinds.
class QueueCommands {
 public:
  virtual ~QueueCommands() = default;
  // Updates a recorded command's value or signal address (index = its position).
  void update_wait(size_t index, uint64_t signal_va, uint64_t value);
  void update_signal(size_t index, uint64_t signal_va, uint64_t value);
  // Encodes and submits; returns the device timeline value marking completion.
  virtual uint64_t submit(Device& device) = 0;
  size_t size() const { return commands_.size(); }
  void clear() { commands_.clear(); }

 protected:
  enum class Kind { kWait, kSignal, kExec, kCopy, kBarrier };
  struct Command {
    Kind kind;
    uint64_t va = 0, value = 0;            // wait / signal
    uint64_t dst = 0, src = 0, bytes = 0;  // copy
    const Program* program = nullptr;      // exec
    bool self_ordered = false;             // exec
    std::vector<uint8_t> params;
    LaunchDims dims;
  };
  Command& command(size_t index, Kind expected, const char* what);
  void add_wait(uint64_t va, uint64_t value);
  void add_signal(uint64_t va, uint64_t value);
  // Encodes the wait and signal commands common to both queues; false for others.
  bool encode_sync(Device& device, const Command& c, drv::Engine engine, PushBuffer& pb) const;
  std::vector<Command> commands_;
};

// The fluent recording interface, returning the concrete queue type.
template <typename Self>
class HwQueue : public QueueCommands {
 public:
  // The GPU waits until the signal's value >= value.
  Self& wait(const Signal& s, uint64_t value) { return wait(s.va(), value); }
  Self& wait(uint64_t signal_va, uint64_t value) {
    add_wait(signal_va, value);
    return static_cast<Self&>(*this);
  }
  // The GPU writes `value` (and the GPU time) to the signal once everything before is done.
  Self& signal(const Signal& s, uint64_t value) { return signal(s.va(), value); }
  Self& signal(uint64_t signal_va, uint64_t value) {
    add_signal(signal_va, value);
    return static_cast<Self&>(*this);
  }
  // Records the GPU time at this point as the signal's timestamp.
  Self& timestamp(const Signal& s) { return signal(s.va(), 0); }
};

class ComputeQueue : public HwQueue<ComputeQueue> {
 public:
  // Launches `program` with packed arguments. A self-ordered launch is neither
  // chained to the launch before it nor preceded by a wait for idle: the GPU
  // starts it while earlier work runs, and its kernel orders itself in memory.
  ComputeQueue& exec(const Program& program, const KernelArgs& args, const LaunchDims& dims,
                     bool self_ordered = false);
  // Makes writes of earlier launches visible to later ones and to the copy engine.
  ComputeQueue& memory_barrier();
  void update_exec(size_t index, const KernelArgs* args, const LaunchDims* dims);

  uint64_t submit(Device& device) override;
  // Builds the pushbuffer (and writes QMDs and constant banks into the device's
  // argument ring) without submitting: for tests and graphs.
  PushBuffer encode(Device& device) const;

  // The SM carve-out (KiB) each launch's QMD asks for, 0 for other commands. A
  // launch alone wants the smallest that holds as many of its CTAs as an SM
  // runs at once. A run of launches that may share SMs -- a launch and the
  // self-ordered ones right behind it -- all ask for the largest any of them
  // wants: an SM drains before its carve-out changes, so a block of the next
  // launch could not start beside the last blocks of the one before
  // (docs/perf-notes.md).
  std::vector<uint32_t> carveout_targets(const hw::ArchParams& arch) const;

 private:
  // Whether command i is a self-ordered launch right behind another launch,
  // in the run the launch before it began (carveout_targets, encode).
  bool joins_run(size_t i) const;
};

class CopyQueue : public HwQueue<CopyQueue> {
 public:
  CopyQueue& copy(uint64_t dst_va, uint64_t src_va, uint64_t bytes);
  void update_copy(size_t index, uint64_t dst_va, uint64_t src_va, uint64_t bytes);

  uint64_t submit(Device& device) override;
  PushBuffer encode(Device& device) const;
};

}  // namespace nvhcq::gpu
