// SimChannel: fetching GPFIFO entries, checking what the CPU left in flight,
// and the host and copy-engine methods. Compute methods are sim_compute.cpp's.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "gpu/hw/methods.h"
#include "sim/sim_compute.h"
#include "sim/sim_engine.h"

namespace nvhcq::sim {
namespace {

namespace host = gpu::hw::host;
namespace copy = gpu::hw::copy;

constexpr uint64_t kUserdGpGet = 0x88, kUserdGpPut = 0x8c;
constexpr uint32_t kCaptureBudget = 512;  // entries looked at per step

uint64_t timestamp_ns() {
  return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}

}  // namespace

bool parse_pushbuffer(const std::vector<uint32_t>& pb, std::vector<std::array<uint32_t, 3>>& out,
                      std::string* error) {
  for (size_t i = 0; i < pb.size();) {
    uint32_t h = pb[i++];
    if (h == 0) continue;  // a NOP word
    uint32_t op = h >> 29, count = (h >> 16) & 0x1fff, subch = (h >> 13) & 7,
             addr = (h & 0x1fff) << 2;
    switch (op) {
      case 1:  // increasing
      case 3:  // non-increasing
      case 5:  // increase once
        if (count == 0 || i + count > pb.size()) {
          *error = "method header at word " + std::to_string(i - 1) + " runs past the pushbuffer";
          return false;
        }
        for (uint32_t k = 0; k < count; ++k) {
          uint32_t a = op == 1   ? addr + 4 * k
                       : op == 5 ? addr + 4 * std::min<uint32_t>(k, 1)
                                 : addr;
          out.push_back({subch, a, pb[i + k]});
        }
        i += count;
        break;
      case 4:  // immediate data
        out.push_back({subch, addr, count});
        break;
      default:
        *error = "unsupported method header " + hex(h) + " at word " + std::to_string(i - 1);
        return false;
    }
  }
  return true;
}

const char* fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kMmu:
      return "MMU fault";
    case FaultKind::kPbdma:
      return "PBDMA error";
    case FaultKind::kGraphics:
      return "graphics exception";
    case FaultKind::kBadMethod:
      return "illegal method";
    case FaultKind::kViolation:
      return "violation";
  }
  return "fault";
}

void SimStats::reset() {
  for (auto* c : {&fetched, &entries, &launches, &host_releases, &qmd_releases, &copy_releases,
                  &dma_copies, &dma_bytes, &doorbells, &acquires_waited}) {
    c->store(0);
  }
}

SimChannel::SimChannel(ChannelConfig config, KernelLog* log, SimStats* stats,
                       const SimOptions* options)
    : config_(std::move(config)), log_(log), stats_(stats), options_(options) {
  classes_ = config_.classes;
  compute_ = std::make_unique<ComputeUnit>(*this);
}

void SimChannel::add_class(uint32_t cls) {
  std::lock_guard<std::mutex> lock(classes_mutex_);
  classes_.push_back(cls);
}

bool SimChannel::has_class(uint32_t cls) const {
  std::lock_guard<std::mutex> lock(classes_mutex_);
  return std::find(classes_.begin(), classes_.end(), cls) != classes_.end();
}

SimChannel::~SimChannel() = default;

uint32_t SimChannel::read_gp_put() const {
  auto* p = reinterpret_cast<uint32_t*>(config_.userd->host() + config_.userd_offset + kUserdGpPut);
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

void SimChannel::fault(const ChannelFault& f) {
  if (faulted_.exchange(true)) return;
  std::string line = config_.name + ": " + fault_kind_name(f.kind) +
                     (f.va != 0 ? " at " + hex(f.va) : std::string()) + ": " + f.what;
  if (f.kind == FaultKind::kViolation) {
    log_->violation(line);
  } else {
    log_->line(line);
  }
  std::vector<std::shared_ptr<SimChannel>> others;
  if (config_.group) {
    std::lock_guard<std::mutex> lock(config_.group->mutex);
    config_.group->faulted = true;
    for (auto& w : config_.group->channels) {
      if (auto c = w.lock(); c && c.get() != this) others.push_back(c);
    }
  }
  if (config_.report) config_.report(f);
  // The kernel recovers the whole group: every channel in it reports the error.
  for (auto& c : others) {
    if (!c->faulted_.exchange(true) && c->config_.report) c->config_.report(f);
  }
}

void SimChannel::watch(uint64_t va, std::vector<uint8_t> bytes, std::string what) {
  if (capturing_ != nullptr)
    capturing_->watched.push_back(Snapshot{va, std::move(bytes), std::move(what)});
}

void SimChannel::check_watched(uint64_t va, const std::vector<uint8_t>& bytes,
                               const std::string& what) {
  if (!current_) return;
  for (const auto& s : current_->watched) {
    if (s.va == va && s.bytes.size() == bytes.size() && s.what.rfind(what.substr(0, 3), 0) == 0) {
      if (s.bytes != bytes) {
        throw ChannelFault{FaultKind::kViolation, va,
                           what + " at " + hex(va) +
                               " was rewritten by the CPU after it was "
                               "submitted and before the GPU read it"};
      }
      return;
    }
  }
}

void SimChannel::prescan_launches(Entry& e) {
  std::vector<std::array<uint32_t, 3>> methods;
  std::string error;
  if (!parse_pushbuffer(e.pb, methods, &error)) return;  // reported when it runs
  capturing_ = &e;
  for (const auto& m : methods) {
    if (m[1] == gpu::hw::compute::SEND_PCAS_A && m[0] != 0) {
      ComputeUnit::prescan(*this, uint64_t{m[2]} << 8);
    }
  }
  capturing_ = nullptr;
}

void SimChannel::capture(Clock::time_point now) {
  uint32_t put = doorbell_put_.load();
  if (put >= config_.entries) {
    throw ChannelFault{FaultKind::kPbdma, 0,
                       "GP_PUT " + std::to_string(put) + " is beyond the " +
                           std::to_string(config_.entries) + "-entry ring"};
  }
  for (uint32_t n = 0; n < kCaptureBudget && captured_put_ != put; ++n) {
    Entry e;
    e.index = captured_put_;
    e.seen = now;
    try {
      e.raw = as().load64(config_.ring_va + uint64_t{e.index} * 8);
    } catch (const SimFault& f) {
      throw ChannelFault{FaultKind::kMmu, f.va, "GPFIFO ring fetch: " + f.what};
    }
    e.pb_va = e.raw & 0xfffffffffcull;
    e.words = static_cast<uint32_t>((e.raw >> 42) & 0x1fffff);
    if (e.words != 0) {
      e.pb.resize(e.words);
      try {
        as().read(e.pb_va, e.pb.data(), uint64_t{e.words} * 4);
      } catch (const SimFault& f) {
        e.fetch_error = f.what;
        e.fetch_va = f.va;
      }
      if (e.fetch_error.empty()) prescan_launches(e);
    }
    seen_.push_back(std::move(e));
    captured_put_ = (captured_put_ + 1) % config_.entries;
    stats_->fetched++;
  }
}

void SimChannel::start_entry() {
  current_ = std::make_unique<Entry>(std::move(seen_.front()));
  seen_.pop_front();
  Entry& e = *current_;
  pc_ = 0;
  released_ = false;
  methods_.clear();
  uint64_t raw_now = as().load64(config_.ring_va + uint64_t{e.index} * 8);
  if (raw_now != e.raw) {
    throw ChannelFault{
        FaultKind::kViolation, config_.ring_va + e.index * 8ull,
        "GPFIFO entry " + std::to_string(e.index) + " was overwritten before the GPU consumed it"};
  }
  if (e.words == 0) {
    throw ChannelFault{FaultKind::kPbdma, 0,
                       "GPFIFO entry " + std::to_string(e.index) + " has length 0"};
  }
  if (!e.fetch_error.empty()) {
    throw ChannelFault{FaultKind::kMmu, e.fetch_va, "pushbuffer fetch: " + e.fetch_error};
  }
  if (spec().require_cacheable_pushbuffers) {
    auto m = as().lookup(e.pb_va);
    uint32_t caching = m ? (m->object->cache_flags & 3) : 0;
    if (m && caching < 2) {
      throw ChannelFault{FaultKind::kPbdma, e.pb_va,
                         "pushbuffer at " + hex(e.pb_va) + " is in " +
                             (caching == 1 ? "write-combined" : "uncached") +
                             " memory; the host engine fetches only cacheable pushbuffers "
                             "(SKED/PBDMA exception)"};
    }
  }
  std::vector<uint32_t> now(e.words);
  as().read(e.pb_va, now.data(), now.size() * 4);
  if (now != e.pb) {
    throw ChannelFault{FaultKind::kViolation, e.pb_va,
                       "pushbuffer at " + hex(e.pb_va) + " (GPFIFO entry " +
                           std::to_string(e.index) +
                           ") was rewritten after it was submitted and before the GPU fetched it"};
  }
  std::vector<std::array<uint32_t, 3>> parsed;
  std::string error;
  if (!parse_pushbuffer(e.pb, parsed, &error)) {
    throw ChannelFault{FaultKind::kPbdma, e.pb_va, error};
  }
  methods_.reserve(parsed.size());
  for (const auto& m : parsed) methods_.push_back(Method{m[0], m[1], m[2]});
}

void SimChannel::verify_in_flight(const char* when) {
  const Entry& e = *current_;
  auto differs = [&](uint64_t va, const void* want, size_t n) {
    std::vector<uint8_t> got(n);
    try {
      as().read(va, got.data(), n);
    } catch (const SimFault&) {
      return true;  // unmapped while in flight: freed too early
    }
    return std::memcmp(got.data(), want, n) != 0;
  };
  if (differs(e.pb_va, e.pb.data(), e.pb.size() * 4)) {
    throw ChannelFault{
        FaultKind::kViolation, e.pb_va,
        "pushbuffer at " + hex(e.pb_va) + " changed while the GPU was executing it (" + when + ")"};
  }
  for (const auto& s : e.watched) {
    if (differs(s.va, s.bytes.data(), s.bytes.size())) {
      throw ChannelFault{FaultKind::kViolation, s.va,
                         s.what + " at " + hex(s.va) +
                             " changed while the GPU could still read it (" + when + ")"};
    }
  }
}

void SimChannel::before_release() {
  // A release may let the CPU reuse this entry's memory: it must still hold
  // exactly what the GPU was given.
  if (current_) verify_in_flight("checked before a semaphore release");
  released_ = true;
}

void SimChannel::retire_entry() {
  if (!released_) verify_in_flight("checked at the end of the entry");
  get_ = (current_->index + 1) % config_.entries;
  auto* p = reinterpret_cast<uint32_t*>(config_.userd->host() + config_.userd_offset + kUserdGpGet);
  __atomic_store_n(p, get_, __ATOMIC_RELEASE);
  stats_->entries++;
  current_.reset();
}

bool SimChannel::run_entry() {
  bool progress = false;
  while (pc_ < methods_.size()) {
    if (execute(methods_[pc_]) == Result::kBlocked) return progress;
    ++pc_;
    progress = true;
  }
  retire_entry();
  return true;
}

bool SimChannel::step(Clock::time_point now) {
  if (!runnable() || faulted()) return false;
  try {
    size_t before = seen_.size();
    capture(now);
    bool progress = seen_.size() != before;
    if (!current_) {
      if (seen_.empty() || options_->hold.load()) return progress;
      auto latency = std::chrono::microseconds(options_->entry_latency_us.load());
      if (now - seen_.front().seen < latency) return progress;
      start_entry();
    }
    return run_entry() || progress;
  } catch (const ChannelFault& f) {
    fault(f);
  } catch (const SimFault& f) {
    fault(ChannelFault{FaultKind::kMmu, f.va, f.what});
  }
  return true;
}

SimChannel::Result SimChannel::execute(const Method& m) {
  released_ = false;  // set again by a release this method makes
  if (m.addr < 0x100) return host_method(m);
  uint32_t cls = subch_class_[m.subch];
  if (cls == 0) {
    throw ChannelFault{FaultKind::kPbdma, 0,
                       "method " + hex(m.addr) + " on subchannel " + std::to_string(m.subch) +
                           ", which has no object bound"};
  }
  if (cls == spec().compute_class) {
    compute_->method(m.addr, m.data);
  } else if (cls == spec().dma_class) {
    copy_method(m);
  } else {
    throw ChannelFault{FaultKind::kBadMethod, 0, "class " + hex(cls) + " is not simulated"};
  }
  return Result::kDone;
}

SimChannel::Result SimChannel::host_method(const Method& m) {
  switch (m.addr) {
    case host::SET_OBJECT: {
      uint32_t cls = m.data & 0xffff;
      if (!has_class(cls)) {
        throw ChannelFault{
            FaultKind::kBadMethod, 0,
            "SET_OBJECT of class " + hex(cls) + ", which is not allocated on this channel"};
      }
      subch_class_[m.subch] = cls;
      return Result::kDone;
    }
    case host::NON_STALL_INTERRUPT:
    case host::WFI:  // the simulated engines finish each method before the next
      return Result::kDone;
    case host::SEM_ADDR_LO:
      sem_addr_ = (sem_addr_ & ~0xffffffffull) | m.data;
      return Result::kDone;
    case host::SEM_ADDR_HI:
      sem_addr_ = (sem_addr_ & 0xffffffffull) | (uint64_t{m.data & 0x1ffffff} << 32);
      return Result::kDone;
    case host::SEM_PAYLOAD_LO:
      sem_payload_ = (sem_payload_ & ~0xffffffffull) | m.data;
      return Result::kDone;
    case host::SEM_PAYLOAD_HI:
      sem_payload_ = (sem_payload_ & 0xffffffffull) | (uint64_t{m.data} << 32);
      return Result::kDone;
    case host::SEM_EXECUTE:
      break;
    default:
      throw ChannelFault{FaultKind::kBadMethod, 0,
                         "host method " + hex(m.addr) + " is not simulated"};
  }
  uint32_t op = m.data & 7;
  bool wide = (m.data & host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT) != 0;
  bool stamp = (m.data & host::SEM_EXECUTE_RELEASE_TIMESTAMP) != 0;
  uint64_t align = stamp ? 16 : wide ? 8 : 4;
  if (sem_addr_ % align != 0) {
    throw ChannelFault{FaultKind::kPbdma, sem_addr_,
                       "semaphore address " + hex(sem_addr_) + " is not " + std::to_string(align) +
                           "-byte aligned"};
  }
  if (op == host::SEM_EXECUTE_OPERATION_RELEASE) {
    before_release();
    if (wide) {
      as().store64(sem_addr_, sem_payload_);
    } else {
      as().store32(sem_addr_, static_cast<uint32_t>(sem_payload_));
    }
    if (stamp) as().store64(sem_addr_ + 8, timestamp_ns());
    stats_->host_releases++;
    return Result::kDone;
  }
  uint64_t have = wide ? as().load64(sem_addr_) : as().load32(sem_addr_);
  uint64_t want = wide ? sem_payload_ : static_cast<uint32_t>(sem_payload_);
  bool ok;
  switch (op) {
    case host::SEM_EXECUTE_OPERATION_ACQUIRE:
      ok = have == want;
      break;
    case 2:
      ok = have >= want;
      break;  // ACQ_STRICT_GEQ
    case host::SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
      ok = wide ? static_cast<int64_t>(have - want) >= 0
                : static_cast<int32_t>(static_cast<uint32_t>(have) - static_cast<uint32_t>(want)) >=
                      0;
      break;
    case 4:
      ok = (have & want) != 0;
      break;  // ACQ_AND
    case 5:
      ok = (have & want) == 0;
      break;  // ACQ_NOR
    default:
      throw ChannelFault{FaultKind::kBadMethod, 0,
                         "semaphore operation " + std::to_string(op) + " is not simulated"};
  }
  if (!ok) {
    if (pc_ != blocked_pc_) stats_->acquires_waited++;
    blocked_pc_ = pc_;
    return Result::kBlocked;
  }
  blocked_pc_ = SIZE_MAX;
  return Result::kDone;
}

void SimChannel::copy_method(const Method& m) {
  switch (m.addr) {
    case copy::SET_SEMAPHORE_A:
      copy_sem_addr_ = (copy_sem_addr_ & 0xffffffffull) | (uint64_t{m.data & 0x1ffffff} << 32);
      return;
    case copy::SET_SEMAPHORE_B:
      copy_sem_addr_ = (copy_sem_addr_ & ~0xffffffffull) | m.data;
      return;
    case copy::SET_SEMAPHORE_PAYLOAD:
      copy_sem_payload_ = (copy_sem_payload_ & ~0xffffffffull) | m.data;
      return;
    case copy::SET_SEMAPHORE_PAYLOAD_UPPER:
      copy_sem_payload_ = (copy_sem_payload_ & 0xffffffffull) | (uint64_t{m.data} << 32);
      return;
    case copy::OFFSET_IN_UPPER:
      copy_in_ = (copy_in_ & 0xffffffffull) | (uint64_t{m.data & 0x1ffffff} << 32);
      return;
    case copy::OFFSET_IN_LOWER:
      copy_in_ = (copy_in_ & ~0xffffffffull) | m.data;
      return;
    case copy::OFFSET_OUT_UPPER:
      copy_out_ = (copy_out_ & 0xffffffffull) | (uint64_t{m.data & 0x1ffffff} << 32);
      return;
    case copy::OFFSET_OUT_LOWER:
      copy_out_ = (copy_out_ & ~0xffffffffull) | m.data;
      return;
    case copy::LINE_LENGTH_IN:
      copy_length_ = m.data;
      return;
    case copy::LAUNCH_DMA:
      copy_release(m.data);
      return;
    default:
      throw ChannelFault{FaultKind::kBadMethod, 0,
                         "copy class " + hex(spec().dma_class) + " has no method " + hex(m.addr)};
  }
}

void SimChannel::copy_release(uint32_t launch) {
  uint32_t transfer = launch & 3;
  if (transfer != 0) {
    bool pitch = (launch & copy::LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH) != 0 &&
                 (launch & copy::LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) != 0;
    bool multi_line = (launch >> 9) & 1, remap = (launch >> 10) & 1, physical = (launch >> 12) & 3;
    if (!pitch || multi_line || remap || physical) {
      throw ChannelFault{FaultKind::kBadMethod, 0,
                         "LAUNCH_DMA " + hex(launch) +
                             ": only 1-D pitch copies between virtual "
                             "addresses are simulated"};
    }
    try {
      as().copy(copy_out_, copy_in_, copy_length_);
    } catch (const SimFault& f) {
      throw ChannelFault{FaultKind::kMmu, f.va, "copy engine: " + f.what};
    }
    stats_->dma_copies++;
    stats_->dma_bytes += copy_length_;
  }
  uint32_t sem = (launch >> 3) & 3;
  if (sem == 0) return;
  bool wide = (launch & copy::LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD) != 0;
  if (wide && spec().dma_class == 0xc6b5) {
    throw ChannelFault{FaultKind::kBadMethod, 0,
                       "AMPERE_DMA_COPY_A has no 64-bit semaphore payload"};
  }
  before_release();
  try {
    if (wide) {
      as().store64(copy_sem_addr_, copy_sem_payload_);
    } else {
      as().store32(copy_sem_addr_, static_cast<uint32_t>(copy_sem_payload_));
    }
    if (sem == 2) as().store64(copy_sem_addr_ + 8, timestamp_ns());
  } catch (const SimFault& f) {
    throw ChannelFault{FaultKind::kMmu, f.va, "copy engine semaphore: " + f.what};
  }
  stats_->copy_releases++;
}

}  // namespace nvhcq::sim
