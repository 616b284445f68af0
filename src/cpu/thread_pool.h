#pragma once
// ThreadPool: a fixed set of worker threads that split an index range between
// themselves and the calling thread. It is the only threading primitive of the CPU
// backend (tensor kernels, LLM CPU inference), so its API stays small:
//
//   cpu::parallel_for(0, rows, /*grain=*/16, [&](int64_t lo, int64_t hi) {
//     for (int64_t r = lo; r < hi; ++r) ...;
//   });
//
// Semantics:
// - fn(lo, hi) is called on disjoint chunks that exactly cover [begin, end); every
//   chunk except possibly the last has at least `grain` indices. The caller runs
//   chunks too and returns only when all chunks are done.
// - A parallel_for issued from inside a chunk (nested) runs serially on the thread
//   that issued it, so nesting never deadlocks. Concurrent callers from different
//   threads take turns.
// - If fn throws, remaining chunks are skipped and the first exception is rethrown
//   in the caller after every thread has left the job.
// - The default pool has cpu::cpu_info().logical_cores threads (the caller counts
//   as one), or NVHCQ_THREADS when that is set to a positive integer.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace nvhcq::cpu {

class ThreadPool {
 public:
  // `threads` counts the caller: ThreadPool(1) starts no worker and runs inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that execute chunks, the caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  template <typename Fn>
  void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    run(begin, end, grain,
        [](void* ctx, int64_t lo, int64_t hi) { (*static_cast<F*>(ctx))(lo, hi); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using ChunkFn = void (*)(void* ctx, int64_t lo, int64_t hi);
  void run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, void* ctx);
  void worker_loop();
  void work_on_current_job();

  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // one job at a time

  // Workers spin briefly on generation_ before sleeping on wake_, and the caller spins
  // on workers_out_ before sleeping on finished_: back-to-back small jobs (LLM decode)
  // then cost no sleep/wake round trip. Job fields are written before the release
  // store of generation_ and stay unchanged until workers_out_ drops to zero.
  std::mutex state_mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int> workers_out_{0};  // workers not yet done with the current generation

  ChunkFn job_fn_ = nullptr;
  void* job_ctx_ = nullptr;
  int64_t job_end_ = 0, job_chunk_ = 1;
  std::atomic<int64_t>* job_next_ = nullptr;
  std::atomic<bool>* job_failed_ = nullptr;
  std::exception_ptr job_error_;  // guarded by state_mutex_
};

// The process-wide pool (created on first use).
ThreadPool& default_pool();

// default_pool().parallel_for(...).
template <typename Fn>
void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  default_pool().parallel_for(begin, end, grain, std::forward<Fn>(fn));
}

// Threads the default pool uses: NVHCQ_THREADS if valid, else logical cores.
int default_thread_count();

}  // namespace nvhcq::cpu
