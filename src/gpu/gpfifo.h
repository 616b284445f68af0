#pragma once
// The GPFIFO ring of one channel: entries pointing at pushbuffers, the GP_PUT the
// CPU advances, and the doorbell. Never overwrites an entry the GPU has not
// consumed: when the ring is full it re-reads GP_GET and waits.

#include <cstdint>
#include <functional>

#include "drv/driver_iface.h"

namespace nvhcq::gpu {

class GpfifoRing {
 public:
  // on_stall is called while waiting for space (to poll for channel errors).
  GpfifoRing(const drv::ChannelHandles& channel, std::function<void()> on_stall);

  // Queues one pushbuffer and rings the doorbell.
  void submit(uint64_t pushbuffer_va, uint32_t words);

  uint32_t entries() const { return channel_.ring_entries; }
  uint64_t submitted() const { return submitted_; }
  uint64_t stalls() const { return stalls_; }

 private:
  drv::ChannelHandles channel_;
  std::function<void()> on_stall_;
  uint32_t put_ = 0;         // next entry index
  uint32_t cached_get_ = 0;  // last GP_GET read (reading it is a slow BAR read)
  uint64_t submitted_ = 0, stalls_ = 0;
};

}  // namespace nvhcq::gpu
