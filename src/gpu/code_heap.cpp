#include "gpu/code_heap.h"

#include <algorithm>

#include "base/error.h"
#include "gpu/device.h"

namespace nvhcq::gpu {
namespace {

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

CodeBlock& CodeBlock::operator=(CodeBlock&& other) noexcept {
  if (this != &other) {
    reset();
    heap_ = other.heap_;
    va_ = other.va_;
    cpu_ = other.cpu_;
    other.heap_ = nullptr;
    other.va_ = 0;
    other.cpu_ = nullptr;
  }
  return *this;
}

void CodeBlock::reset() {
  if (heap_ != nullptr) heap_->free(va_);
  heap_ = nullptr;
  va_ = 0;
  cpu_ = nullptr;
}

CodeBlock CodeHeap::alloc(size_t bytes) {
  const uint64_t need = round_up(bytes, kBlockAlign) + kGuardBytes;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& c : chunks_) {
    try {
      uint64_t va = c->ranges.alloc(need, kBlockAlign);
      ++c->live;
      return CodeBlock(this, va, static_cast<uint8_t*>(c->memory.cpu()) + (va - c->memory.va()));
    } catch (const OutOfMemoryError&) {
      // this chunk is full; try the next
    }
  }
  auto c = std::make_unique<Chunk>();
  c->memory =
      device_.alloc(std::max(kChunkBytes, round_up(need, kBlockAlign)), /*cpu_access=*/true);
  c->ranges.init(c->memory.va(), c->memory.size());
  uint64_t va = c->ranges.alloc(need, kBlockAlign);
  c->live = 1;
  CodeBlock block(this, va, static_cast<uint8_t*>(c->memory.cpu()) + (va - c->memory.va()));
  chunks_.push_back(std::move(c));
  return block;
}

void CodeHeap::free(uint64_t va) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < chunks_.size(); ++i) {
    Chunk& c = *chunks_[i];
    if (va < c.memory.va() || va >= c.memory.va() + c.memory.size()) continue;
    c.ranges.free(va);
    // An empty chunk goes back to the driver, except the last one left.
    if (--c.live == 0 && chunks_.size() > 1) chunks_.erase(chunks_.begin() + i);
    return;
  }
}

size_t CodeHeap::chunks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_.size();
}

}  // namespace nvhcq::gpu
