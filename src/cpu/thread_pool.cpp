#include "cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "base/log.h"
#include "cpu/cpu_info.h"

namespace nvhcq::cpu {
namespace {

// True while this thread executes chunks of some pool's job: a parallel_for issued
// then runs serially instead of waiting on workers that may be busy with the caller.
thread_local bool t_inside_job = false;

struct InsideJob {
  bool saved = t_inside_job;
  InsideJob() { t_inside_job = true; }
  ~InsideJob() { t_inside_job = saved; }
};

}  // namespace

ThreadPool::ThreadPool(int threads) {
  int workers = std::max(threads, 1) - 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or about `budget` has passed; returns done().
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds budget) {
  auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() > deadline) return done();
  }
}

constexpr std::chrono::microseconds kSpinBudget{50};

}  // namespace

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    auto has_work = [&] {
      return stopping_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (!spin_until(has_work, kSpinBudget)) {
      std::unique_lock<std::mutex> lock(state_mutex_);
      wake_.wait(lock, has_work);
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    work_on_current_job();
    if (workers_out_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Taking the lock orders this notify after a caller's predicate check.
      std::lock_guard<std::mutex> lock(state_mutex_);
      finished_.notify_one();
    }
  }
}

// Claims chunks until none is left (or one failed).
void ThreadPool::work_on_current_job() {
  InsideJob inside;
  while (!job_failed_->load(std::memory_order_relaxed)) {
    int64_t lo = job_next_->fetch_add(job_chunk_, std::memory_order_relaxed);
    if (lo >= job_end_) break;
    int64_t hi = std::min(lo + job_chunk_, job_end_);
    try {
      job_fn_(job_ctx_, lo, hi);
    } catch (...) {
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (!job_error_) job_error_ = std::current_exception();
      job_failed_->store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, void* ctx) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n = end - begin;
  if (workers_.empty() || n <= grain || t_inside_job) {
    fn(ctx, begin, end);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mutex_);
  // A few chunks per thread balance uneven chunks without much claiming traffic.
  const int64_t threads = size();
  const int64_t chunk = std::max(grain, (n + threads * 4 - 1) / (threads * 4));
  std::atomic<int64_t> next{begin};
  std::atomic<bool> failed{false};
  job_fn_ = fn;
  job_ctx_ = ctx;
  job_end_ = end;
  job_chunk_ = chunk;
  job_next_ = &next;
  job_failed_ = &failed;
  workers_out_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    // Under the lock so that a worker between its predicate check and its wait
    // cannot miss the bump.
    std::lock_guard<std::mutex> lock(state_mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  work_on_current_job();
  auto all_done = [&] { return workers_out_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(all_done, kSpinBudget)) {
    std::unique_lock<std::mutex> lock(state_mutex_);
    finished_.wait(lock, all_done);
  }
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    error = job_error_;
    job_error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

int default_thread_count() {
  int cores = std::max(cpu_info().logical_cores, 1);
  const char* env = std::getenv("NVHCQ_THREADS");
  if (env == nullptr || *env == '\0') return cores;
  char* tail = nullptr;
  long value = std::strtol(env, &tail, 10);
  if (tail == env || *tail != '\0' || value < 1 || value > 4096) {
    log::warn("NVHCQ_THREADS='", env, "' is not a thread count in 1..4096; using ", cores);
    return cores;
  }
  return static_cast<int>(value);
}

ThreadPool& default_pool() {
  static ThreadPool pool(default_thread_count());
  return pool;
}

}  // namespace nvhcq::cpu
