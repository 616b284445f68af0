#include "sim/sim_engine.h"

#include <algorithm>

namespace nvhcq::sim {

SimEngine::SimEngine(KernelLog* log, SimStats* stats, const SimOptions* options)
    : log_(log), stats_(stats), options_(options), thread_([this] { run(); }) {}

SimEngine::~SimEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<SimChannel> SimEngine::add_channel(ChannelConfig config) {
  auto ch = std::make_shared<SimChannel>(std::move(config), log_, stats_, options_);
  if (ch->config().group) {
    std::lock_guard<std::mutex> lock(ch->config().group->mutex);
    ch->config().group->channels.push_back(ch);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    channels_.push_back(ch);
  }
  wake_.notify_all();
  return ch;
}

void SimEngine::remove_channel(const std::shared_ptr<SimChannel>& channel) {
  std::lock_guard<std::mutex> lock(mutex_);
  channels_.erase(std::remove(channels_.begin(), channels_.end(), channel), channels_.end());
}

void SimEngine::add_doorbell(std::shared_ptr<MemoryObject> page, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  doorbells_.emplace_back(std::move(page), offset);
}

void SimEngine::remove_doorbell(const std::shared_ptr<MemoryObject>& page) {
  std::lock_guard<std::mutex> lock(mutex_);
  doorbells_.erase(std::remove_if(doorbells_.begin(), doorbells_.end(),
                                  [&](const auto& d) { return d.first == page; }),
                   doorbells_.end());
}

size_t SimEngine::channel_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return channels_.size();
}

bool SimEngine::poll_doorbells() {
  std::vector<std::pair<std::shared_ptr<MemoryObject>, uint64_t>> bells;
  std::vector<std::shared_ptr<SimChannel>> channels;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    bells = doorbells_;
    channels = channels_;
  }
  bool rung = false;
  for (auto& [page, offset] : bells) {
    auto* word = reinterpret_cast<uint32_t*>(page->host() + offset);
    uint32_t token = __atomic_exchange_n(word, 0u, __ATOMIC_ACQ_REL);
    if (token == 0) continue;
    if (int drop = options_->drop_doorbells.load(); drop > 0) {
      options_->drop_doorbells.store(drop - 1);
      continue;
    }
    rung = true;
    stats_->doorbells++;
    bool known = false;
    for (auto& c : channels) {
      if (c->config().token == token) {
        c->note_doorbell();
        known = true;
      }
    }
    // The register is one word in simulator memory: a second write before this
    // poll replaces the first token, where the hardware takes every write. Any
    // doorbell therefore lets every channel re-read its GP_PUT.
    for (auto& c : channels) c->refresh_put();
    if (!known)
      log_->violation("doorbell rung with token " + std::to_string(token) +
                      ", which no channel was given");
  }
  return rung;
}

void SimEngine::run() {
  // The GPU works as fast as it can while there is work, and backs off when
  // idle: first yielding (a submission is usually near), then sleeping up to
  // half a millisecond, so an idle simulator costs the 2-core CI nothing.
  uint32_t idle = 0;
  for (;;) {
    std::vector<std::shared_ptr<SimChannel>> channels;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      channels = channels_;
    }
    bool progress = poll_doorbells();
    auto now = Clock::now();
    for (auto& c : channels) progress |= c->step(now);
    if (progress) {
      idle = 0;
      continue;
    }
    ++idle;
    if (idle < 64 && !channels.empty()) {
      std::this_thread::yield();
      continue;
    }
    auto nap = channels.empty()
                   ? std::chrono::microseconds(5000)
                   : std::chrono::microseconds(std::min<uint32_t>(20 * (idle - 63), 500));
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, nap, [this] { return stop_; });
  }
}

}  // namespace nvhcq::sim
