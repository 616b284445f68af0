#include "gpu/gpfifo.h"

#include "base/error.h"
#include "gpu/hw/barrier.h"
#include "gpu/hw/methods.h"

namespace nvhcq::gpu {

GpfifoRing::GpfifoRing(const drv::ChannelHandles& channel, std::function<void()> on_stall)
    : channel_(channel), on_stall_(std::move(on_stall)) {
  if (channel_.ring == nullptr || channel_.ring_entries < 2 || channel_.gp_put == nullptr) {
    throw Error("GPFIFO ring handles are incomplete");
  }
  put_ = *channel_.gp_put % channel_.ring_entries;
  cached_get_ = put_;
}

void GpfifoRing::submit(uint64_t pushbuffer_va, uint32_t words) {
  if (words == 0 || words > hw::kMaxGpfifoEntryWords) {
    throw Error("pushbuffer of " + std::to_string(words) + " words cannot be one GPFIFO entry");
  }
  if (pushbuffer_va >= (1ull << 40)) throw Error("pushbuffers must live below 1 TiB of GPU VA");
  uint32_t n = channel_.ring_entries;
  uint32_t next = (put_ + 1) % n;
  while (next == cached_get_) {
    cached_get_ = *channel_.gp_get % n;
    if (next != cached_get_) break;
    ++stalls_;
    if (on_stall_) on_stall_();
    hw::cpu_relax();
  }
  channel_.ring[put_] = hw::gpfifo_entry(pushbuffer_va, words);
  hw::flush_writes_before_doorbell();
  *channel_.gp_put = next;
  hw::flush_writes_before_doorbell();
  *channel_.doorbell = channel_.token;
  put_ = next;
  ++submitted_;
}

}  // namespace nvhcq::gpu
