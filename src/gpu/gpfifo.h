#pragma once
// The GPFIFO ring of one channel: entries pointing at pushbuffers, the GP_PUT the
// CPU advances, and the doorbell. Never overwrites an entry the GPU has not
// consumed: when the ring is full it re-reads GP_GET and waits, for at most a
// timeout: a GPU that consumes nothing (hung, or blocked on a semaphore nobody
// releases) gives a GpuFaultError instead of a hang.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "drv/driver_iface.h"

namespace nvhcq::gpu {

class GpfifoRing {
 public:
  // on_stall is called while waiting for space (to poll for channel errors; it
  // may throw). After `timeout` without space, submit() throws GpuFaultError
  // carrying fault_report() (when given).
  GpfifoRing(const drv::ChannelHandles& channel, std::function<void()> on_stall,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(10000),
             std::function<std::string()> fault_report = {});

  // Queues one pushbuffer and rings the doorbell. Throws GpuFaultError when the
  // ring stays full for the timeout (nothing is queued then).
  void submit(uint64_t pushbuffer_va, uint32_t words);

  uint32_t entries() const { return channel_.ring_entries; }
  uint64_t submitted() const { return submitted_; }
  uint64_t stalls() const { return stalls_; }
  // "GP_GET 5, GP_PUT 7 of 1024": where the GPU is in the ring, for hang reports.
  std::string position() const;
  // Whether the GPU has fetched every entry written so far.
  bool fetched_all() const { return unfetched() == 0; }
  // Entries written but not yet fetched by the GPU (GP_PUT - GP_GET).
  uint32_t unfetched() const;
  // Rings the doorbell again (harmless: the GPU re-reads GP_PUT). The H200 has
  // been seen to miss a doorbell now and then, leaving written entries
  // unfetched while it idles; waits that see no progress for kDoorbellKickAfter
  // ring again.
  void ring_doorbell();
  static constexpr std::chrono::milliseconds kDoorbellKickAfter{2};

 private:
  drv::ChannelHandles channel_;
  std::function<void()> on_stall_;
  std::chrono::milliseconds timeout_;
  std::function<std::string()> fault_report_;
  uint32_t put_ = 0;         // next entry index
  uint32_t cached_get_ = 0;  // last GP_GET read (reading it is a slow BAR read)
  uint64_t submitted_ = 0, stalls_ = 0;
};

}  // namespace nvhcq::gpu
