#include "gpu/gpfifo.h"

#include <thread>

#include "base/error.h"
#include "gpu/hw/barrier.h"
#include "gpu/hw/methods.h"

namespace nvhcq::gpu {

GpfifoRing::GpfifoRing(const drv::ChannelHandles& channel, std::function<void()> on_stall,
                       std::chrono::milliseconds timeout, std::function<std::string()> fault_report)
    : channel_(channel),
      on_stall_(std::move(on_stall)),
      timeout_(timeout),
      fault_report_(std::move(fault_report)) {
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
  if (pushbuffer_va % 4 != 0)
    throw Error("a pushbuffer must be 4-byte aligned (the entry drops the low bits)");
  uint32_t n = channel_.ring_entries;
  uint32_t next = (put_ + 1) % n;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;
  for (uint64_t spins = 0; next == cached_get_; ++spins) {
    cached_get_ = *channel_.gp_get % n;
    if (next != cached_get_) break;
    ++stalls_;
    if (on_stall_) on_stall_();
    if (spins == 0) start = Clock::now();
    if (spins % 1024 == 1023) {
      auto elapsed = Clock::now() - start;
      if (elapsed > timeout_) {
        std::string report = fault_report_ ? fault_report_() : std::string();
        throw GpuFaultError(
            "the GPU consumed no GPFIFO entry for " + std::to_string(timeout_.count()) +
                " ms: the ring of " + std::to_string(n) + " entries stays full (GP_GET " +
                std::to_string(cached_get_) + ", GP_PUT " + std::to_string(put_) + ")" +
                (report.empty() ? "" : ": " + report),
            "GPFIFO submit", 0, "a kernel may hang, or the channel waits on a signal nobody sets");
      }
      if (elapsed > kDoorbellKickAfter) ring_doorbell();  // in case the GPU missed one
      // Spin briefly (the GPU usually frees an entry within microseconds), then yield.
      if (elapsed > std::chrono::microseconds(50)) std::this_thread::yield();
    } else {
      hw::cpu_relax();
    }
  }
  channel_.ring[put_] = hw::gpfifo_entry(pushbuffer_va, words);
  hw::flush_writes_before_doorbell();
  *channel_.gp_put = next;
  hw::flush_writes_before_doorbell();
  *channel_.doorbell = channel_.token;
  put_ = next;
  ++submitted_;
}

uint32_t GpfifoRing::unfetched() const {
  const uint32_t n = channel_.ring_entries;
  // GP_PUT as the GPU sees it (USERD), not put_: waits on other threads call this
  // while a submitter may be advancing put_.
  return (*channel_.gp_put % n + n - *channel_.gp_get % n) % n;
}

void GpfifoRing::ring_doorbell() {
  hw::flush_writes_before_doorbell();
  *channel_.doorbell = channel_.token;
}

std::string GpfifoRing::position() const {
  return "GP_GET " + std::to_string(*channel_.gp_get % channel_.ring_entries) + ", GP_PUT " +
         std::to_string(put_) + " of " + std::to_string(channel_.ring_entries);
}

}  // namespace nvhcq::gpu
