#pragma once
// Recording and replaying the kernels a backend runs: what tensor::Jit needs from
// a backend. A backend that implements CaptureBackend runs kernels as usual while
// recording and also keeps them; the Recording replays them as one unit (a
// gpu::Graph: one submission of chained QMDs on "nv", a CUDA graph on "cuda").
//
// Buffers are bound to a recording through slots: every distinct buffer the
// recorded kernels read or write is one slot. Replacing a slot's buffer (new
// inputs, fresh outputs) patches the arguments of the launches that use it.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "tensor/buffer.h"

namespace nvhcq::tensor {

class Recording {
 public:
  virtual ~Recording() = default;
  virtual size_t launches() const = 0;
  virtual size_t slots() const = 0;
  // The slot holding `b`, if the recorded kernels use it.
  virtual std::optional<size_t> slot_of(const Buffer* b) const = 0;
  virtual const std::shared_ptr<Buffer>& slot_buffer(size_t slot) const = 0;
  // Whether a recorded kernel writes the slot's buffer.
  virtual bool slot_written(size_t slot) const = 0;
  virtual void set_slot(size_t slot, std::shared_ptr<Buffer> buffer) = 0;
  // Whether data was read back to the host while recording (the recording then
  // depends on values it cannot replay).
  virtual bool read_back() const = 0;
  // Leaves out of replays the launches that already ran during the recording and
  // whose results cannot change: those reading no input slot (directly or through
  // an earlier launch's output) and writing no output slot, such as a transposed
  // copy of a weight. Buffers other than inputs never change (tensors are
  // immutable), so their results stay valid. Call before the first replay.
  virtual void freeze_constants(const std::vector<size_t>& input_slots,
                                const std::vector<size_t>& output_slots) = 0;
  // Launches a replay queues.
  virtual size_t replayed_launches() const = 0;
  // Queues the recorded kernels with the current slot buffers.
  virtual void replay() = 0;
};

class CaptureBackend {
 public:
  virtual ~CaptureBackend() = default;
  // From now on, kernels run as usual and are also recorded.
  virtual void begin_recording() = 0;
  virtual std::unique_ptr<Recording> end_recording() = 0;
  virtual bool recording() const = 0;
};

}  // namespace nvhcq::tensor
