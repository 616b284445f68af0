#include "gpu/timeline_ring.h"

#include "base/error.h"

namespace nvhcq::gpu {

TimelineRing::TimelineRing(Buffer buffer, WaitFn wait_for)
    : buffer_(std::move(buffer)), wait_for_(std::move(wait_for)) {
  if (buffer_.cpu() == nullptr) throw Error("a timeline ring needs CPU-mapped memory");
}

void TimelineRing::reclaim_overlapping(size_t begin, size_t end) {
  while (!pending_.empty()) {
    const Region& r = pending_.front();
    bool overlaps = r.begin < end && begin < r.end;
    if (!overlaps) break;
    if (r.tag == UINT64_MAX) throw Error("a single submission overflows the command ring");
    wait_for_(r.tag);
    ++waits_;
    pending_.pop_front();
  }
}

TimelineRing::Span TimelineRing::alloc(size_t size, size_t align) {
  size_t cap = buffer_.size();
  if (size == 0 || size > cap / 2) {
    throw Error("a submission needs " + std::to_string(size) + " bytes of a " +
                std::to_string(cap) + "-byte command ring; split it");
  }
  size_t start = (head_ + align - 1) / align * align;
  if (start + size > cap) {
    // Wrap: the tail end of the ring goes unused this lap. If the current
    // submission already occupies the start of the ring, it cannot wrap onto itself.
    if (untagged_ && untagged_begin_ < size) {
      throw Error("a single submission overflows the command ring");
    }
    // Regions of the previous lap in the skipped tail must be reclaimed before the
    // ones at the start of the ring, to keep pending_ in ring order.
    reclaim_overlapping(head_, cap);
    if (untagged_) {
      // Close the part before the wrap as its own region, tagged with the same value later.
      pending_.push_back(Region{untagged_begin_, cap, UINT64_MAX});
    }
    start = 0;
    untagged_begin_ = 0;
  }
  reclaim_overlapping(start, start + size);
  if (!untagged_) {
    untagged_ = true;
    untagged_begin_ = start;
  }
  head_ = start + size;
  return Span{buffer_.cpu_as<uint8_t>() + start, buffer_.va() + start, size};
}

void TimelineRing::tag(uint64_t value) {
  // The pre-wrap half of this submission, if it wrapped, is the newest region:
  // nothing else is queued between a submission's allocations and its tag.
  if (!pending_.empty() && pending_.back().tag == UINT64_MAX) pending_.back().tag = value;
  if (untagged_) pending_.push_back(Region{untagged_begin_, head_, value});
  untagged_ = false;
}

}  // namespace nvhcq::gpu
