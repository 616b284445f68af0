#pragma once
// A ring of CPU-written, GPU-read memory (pushbuffers, QMDs, kernel arguments).
// Space is handed out in order; each submission tags what it used with the
// timeline value that marks its completion, and space is reused only after the
// GPU has reached that value. No bump pointer runs off its mapping, and no byte
// the GPU may still read is ever rewritten.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

#include "gpu/buffer.h"

namespace nvhcq::gpu {

class TimelineRing {
 public:
  struct Span {
    uint8_t* cpu = nullptr;
    uint64_t va = 0;
    size_t size = 0;
  };
  // wait_for(value) must block until the GPU's timeline reaches `value`.
  using WaitFn = std::function<void(uint64_t)>;

  TimelineRing(Buffer buffer, WaitFn wait_for);

  // Reserves `size` bytes aligned to `align`. Throws Error when `size` exceeds the
  // ring (a single submission can never be larger than the ring).
  Span alloc(size_t size, size_t align);
  // Everything reserved since the last tag becomes free once the timeline reaches `value`.
  void tag(uint64_t value);

  size_t capacity() const { return buffer_.size(); }
  const Buffer& buffer() const { return buffer_; }
  uint64_t waits() const { return waits_; }  // times alloc had to wait for the GPU

 private:
  struct Region {
    size_t begin, end;  // [begin, end) within the ring; end may equal capacity
    uint64_t tag;
  };
  void reclaim_overlapping(size_t begin, size_t end);

  Buffer buffer_;
  WaitFn wait_for_;
  size_t head_ = 0;           // next free byte
  size_t untagged_begin_ = 0; // start of the current submission's reservations
  bool untagged_ = false;
  std::deque<Region> pending_;
  uint64_t waits_ = 0;
};

}  // namespace nvhcq::gpu
