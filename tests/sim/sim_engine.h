#pragma once
// The simulated GPU's execution: channels that consume GPFIFO entries (GP_PUT
// in USERD), parse pushbuffers and run host (semaphore, WFI), compute
// (QMD launches) and copy-engine methods, and one GPU thread that steps them all.
//
// It checks what real hardware would punish: pushbuffers, GPFIFO entries, QMDs
// and constant banks are snapshotted when the GPU first sees them and compared
// before every semaphore release (after which the CPU may reuse them); a CPU
// rewrite in between is a violation. Faults (bad addresses, bad methods, bad
// QMDs) stop the channel's group and are reported through the front end's
// error notifier, as the kernel driver would.

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/sim_log.h"
#include "sim/sim_memory.h"

namespace nvhcq::sim {

using Clock = std::chrono::steady_clock;

enum class FaultKind {
  kMmu,        // an access to an unmapped address (Xid 31 / nvgpu MMU_ERR_FLT)
  kPbdma,      // a bad GPFIFO entry or pushbuffer (Xid 32 / nvgpu PBDMA_ERROR)
  kGraphics,   // a bad launch: QMD, constant bank, program (Xid 13 / GR_EXCEPTION)
  kBadMethod,  // a method the bound class does not have (Xid 69 / GR_EXCEPTION)
  kViolation,  // the CPU broke the rules (a rewrite in flight): reported as a PBDMA error
};
const char* fault_kind_name(FaultKind kind);

// Splits a pushbuffer into (subchannel, method address, data) triples; false,
// with the reason, for what the host engine would refuse.
bool parse_pushbuffer(const std::vector<uint32_t>& pb, std::vector<std::array<uint32_t, 3>>& out,
                      std::string* error);

struct ChannelFault {
  FaultKind kind = FaultKind::kMmu;
  uint64_t va = 0;
  std::string what;
};

// The facts of the simulated chip the engine checks launches against.
struct GpuSpec {
  uint32_t sm_version = 0;
  uint32_t compute_class = 0, dma_class = 0;
  uint32_t num_gpcs = 0, tpc_per_gpc = 0, sm_per_tpc = 0, max_warps_per_sm = 0, tpc_count = 0;
  // Tegra: the host engine (PBDMA) only fetches cacheable pushbuffers.
  bool require_cacheable_pushbuffers = false;
};

// Counters tests read to check how work was done (not only that it was done).
struct SimStats {
  // fetched: GPFIFO entries the GPU has read (pushbuffer and QMDs snapshotted);
  // entries: entries it has finished.
  std::atomic<uint64_t> fetched{0}, entries{0}, launches{0}, host_releases{0}, qmd_releases{0},
      copy_releases{0}, dma_copies{0}, dma_bytes{0}, doorbells{0}, acquires_waited{0};
  void reset();
};

class SimChannel;

// Channels that fault together (an RM channel group, an nvgpu TSG).
struct ChannelGroup {
  std::mutex mutex;
  std::vector<std::weak_ptr<SimChannel>> channels;
  bool faulted = false;
};

struct ChannelConfig {
  std::string name;
  std::shared_ptr<AddressSpace> as;
  uint64_t ring_va = 0;  // GPFIFO entries, in the GPU VA space
  uint32_t entries = 0;
  std::shared_ptr<MemoryObject> userd;  // GP_GET at +0x88, GP_PUT at +0x8c
  uint64_t userd_offset = 0;
  uint32_t token = 0;
  std::vector<uint32_t> classes;  // engine classes allocated on the channel
  const GpuSpec* spec = nullptr;
  std::shared_ptr<ChannelGroup> group;
  // Writes the front end's error notifier (RM Xid notifier, nvgpu notification).
  std::function<void(const ChannelFault&)> report;
};

// Per-simulation knobs, changed by tests.
struct SimOptions {
  // The GPU starts an entry this long after it first saw it (0: at once). Makes
  // races between the CPU and the GPU that real hardware has show up every time.
  std::atomic<int64_t> entry_latency_us{0};
  // While set, the GPU fetches entries (snapshots them) but starts none: a test
  // can then change memory "in flight" without racing the GPU thread.
  std::atomic<bool> hold{false};
  // The next this many doorbells are lost (the GPU does not re-read GP_PUT): the
  // H200 has been seen to miss one, leaving written entries unfetched.
  mutable std::atomic<int> drop_doorbells{0};
};

class ComputeUnit;

class SimChannel : public std::enable_shared_from_this<SimChannel> {
 public:
  SimChannel(ChannelConfig config, KernelLog* log, SimStats* stats, const SimOptions* options);
  ~SimChannel();
  const ChannelConfig& config() const { return config_; }
  bool faulted() const { return faulted_.load(); }
  void set_runnable(bool r) { runnable_.store(r); }
  bool runnable() const { return runnable_.load(); }
  // The GPU reads GP_PUT when the doorbell rings, and fetches up to it.
  void note_doorbell() { ++doorbells_; }
  void refresh_put() { doorbell_put_.store(read_gp_put()); }
  // Engine classes allocated on the channel (SET_OBJECT may bind only these).
  void add_class(uint32_t cls);
  bool has_class(uint32_t cls) const;
  uint64_t doorbells() const { return doorbells_.load(); }

  // Makes progress if it can; true when something happened.
  bool step(Clock::time_point now);
  // Stops the channel with an error the front end reports (and its group's).
  void fault(const ChannelFault& f);
  // Semaphore releases come here first: in-flight memory is verified before the
  // CPU may take the release as permission to reuse it.
  void before_release();
  // Registers a snapshot of memory the GPU is reading for this entry.
  void watch(uint64_t va, std::vector<uint8_t> bytes, std::string what);
  // The entry being executed has (re)read this QMD: compare to the first sight.
  void check_watched(uint64_t va, const std::vector<uint8_t>& bytes, const std::string& what);

  AddressSpace& as() const { return *config_.as; }
  const GpuSpec& spec() const { return *config_.spec; }
  KernelLog& log() const { return *log_; }
  SimStats& stats() const { return *stats_; }
  // The class bound to a subchannel by SET_OBJECT (0: none).
  uint32_t subchannel_class(uint32_t subch) const { return subch < 8 ? subch_class_[subch] : 0; }

 private:
  struct Snapshot {
    uint64_t va;
    std::vector<uint8_t> bytes;
    std::string what;
  };
  struct Entry {
    uint32_t index = 0;
    uint64_t raw = 0;
    uint64_t pb_va = 0;
    uint32_t words = 0;
    std::vector<uint32_t> pb;  // the pushbuffer as first seen
    std::string fetch_error;   // set when the pushbuffer could not be read
    uint64_t fetch_va = 0;
    Clock::time_point seen;
    std::vector<Snapshot> watched;  // QMDs and constant banks, as first seen
  };
  struct Method {
    uint32_t subch, addr, data;
  };
  enum class Result { kDone, kBlocked };

  void capture(Clock::time_point now);
  void prescan_launches(Entry& e);
  void start_entry();
  bool run_entry();
  void verify_in_flight(const char* when);
  void retire_entry();
  Result execute(const Method& m);
  Result host_method(const Method& m);
  void copy_method(const Method& m);
  void copy_release(uint32_t launch);
  uint32_t read_gp_put() const;

  ChannelConfig config_;
  KernelLog* log_;
  SimStats* stats_;
  const SimOptions* options_;
  std::atomic<bool> faulted_{false}, runnable_{false};
  std::atomic<uint64_t> doorbells_{0};
  std::atomic<uint32_t> doorbell_put_{0};  // GP_PUT as of the last doorbell
  mutable std::mutex classes_mutex_;
  std::vector<uint32_t> classes_;

  std::deque<Entry> seen_;  // submitted, not yet started (first-sight snapshots)
  std::unique_ptr<Entry> current_;
  std::vector<Method> methods_;
  size_t pc_ = 0;
  bool released_ = false;         // the last method executed was a semaphore release
  size_t blocked_pc_ = SIZE_MAX;  // the acquire the channel is waiting on
  Entry* capturing_ = nullptr;    // the entry watch() adds first-sight snapshots to
  uint32_t captured_put_ = 0, get_ = 0;

  uint32_t subch_class_[8] = {0};
  // Host semaphore registers.
  uint64_t sem_addr_ = 0, sem_payload_ = 0;
  // Copy engine registers.
  uint64_t copy_in_ = 0, copy_out_ = 0, copy_sem_addr_ = 0, copy_sem_payload_ = 0;
  uint32_t copy_length_ = 0;
  std::unique_ptr<ComputeUnit> compute_;
};

// The GPU thread: steps every runnable channel, polls doorbells, and idles with
// a growing back-off when nothing happens.
class SimEngine {
 public:
  SimEngine(KernelLog* log, SimStats* stats, const SimOptions* options);
  ~SimEngine();
  std::shared_ptr<SimChannel> add_channel(ChannelConfig config);
  void remove_channel(const std::shared_ptr<SimChannel>& channel);
  // A doorbell register: the word at `offset` of `page` takes work-submit tokens.
  void add_doorbell(std::shared_ptr<MemoryObject> page, uint64_t offset);
  void remove_doorbell(const std::shared_ptr<MemoryObject>& page);
  size_t channel_count() const;

 private:
  void run();
  bool poll_doorbells();

  KernelLog* log_;
  SimStats* stats_;
  const SimOptions* options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<SimChannel>> channels_;
  std::vector<std::pair<std::shared_ptr<MemoryObject>, uint64_t>> doorbells_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace nvhcq::sim
