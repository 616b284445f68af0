#include "cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/cpu_info.h"

namespace nvhcq::cpu {
namespace {

// Runs parallel_for and checks that the chunks cover [begin, end) exactly once and
// that every chunk but the last one handed out has at least `grain` indices.
void check_cover(ThreadPool& pool, int64_t begin, int64_t end, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(std::max<int64_t>(end - begin, 0)));
  std::atomic<int> short_chunks{0};
  pool.parallel_for(begin, end, grain, [&](int64_t lo, int64_t hi) {
    ASSERT_LE(begin, lo);
    ASSERT_LT(lo, hi);
    ASSERT_LE(hi, end);
    if (hi - lo < grain && hi != end) short_chunks++;
    for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i - begin)]++;
  });
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i + begin;
  EXPECT_EQ(short_chunks.load(), 0);
}

TEST(ThreadPool, ChunksCoverRangeExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  for (int64_t n : {1, 2, 3, 7, 64, 1023, 4097, 100000}) {
    for (int64_t grain : {1, 5, 128}) check_cover(pool, 3, 3 + n, grain);
  }
}

TEST(ThreadPool, EmptyAndReversedRangesCallNothing) {
  ThreadPool pool(3);
  int calls = 0;
  pool.parallel_for(5, 5, 1, [&](int64_t, int64_t) { calls++; });
  pool.parallel_for(9, 2, 1, [&](int64_t, int64_t) { calls++; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, SingleThreadPoolRunsInlineOnCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1);
  std::set<std::thread::id> ids;
  int64_t sum = 0;
  pool.parallel_for(0, 1000, 1, [&](int64_t lo, int64_t hi) {
    ids.insert(std::this_thread::get_id());
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum, 999 * 1000 / 2);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(*ids.begin(), std::this_thread::get_id());
}

// Three chunks that each wait until three threads hold a chunk: this completes
// only if all three threads of the pool, the caller among them, run at once.
TEST(ThreadPool, CallerAndWorkersRunConcurrently) {
  ThreadPool pool(3);
  std::atomic<int> arrived{0};
  std::atomic<bool> timed_out{false};
  std::mutex ids_mutex;
  std::set<std::thread::id> ids;
  pool.parallel_for(0, 3, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(ids_mutex);
      ids.insert(std::this_thread::get_id());
    }
    arrived++;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < 3) {
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_FALSE(timed_out.load());
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u) << "the caller did not take part";
}

TEST(ThreadPool, NestedCallsRunSeriallyWithoutDeadlock) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.parallel_for(0, 16, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      pool.parallel_for(0, 100, 1, [&](int64_t a, int64_t b) {
        int64_t local = 0;
        for (int64_t j = a; j < b; ++j) local += j;
        total += local;
      });
    }
  });
  EXPECT_EQ(total.load(), 16 * (99 * 100 / 2));
}

TEST(ThreadPool, ExceptionReachesCallerAndPoolStaysUsable) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(0, 1000, 1,
                                 [&](int64_t lo, int64_t hi) {
                                   if (lo <= 500 && 500 < hi) throw std::runtime_error("chunk 500");
                                 }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(0, 1000, 7, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
}

TEST(ThreadPool, ManySmallJobsLoseNoWakeups) {
  ThreadPool pool(2);
  for (int job = 0; job < 3000; ++job) {
    std::atomic<int> sum{0};
    pool.parallel_for(0, 8, 1, [&](int64_t lo, int64_t hi) { sum += static_cast<int>(hi - lo); });
    ASSERT_EQ(sum.load(), 8) << "job " << job;
  }
}

// Jobs spaced wider than the workers' spin time: each one wakes sleeping workers.
TEST(ThreadPool, JobsAfterIdleGapsWakeSleepingWorkers) {
  ThreadPool pool(3);
  for (int job = 0; job < 20; ++job) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    std::atomic<int> sum{0};
    pool.parallel_for(0, 64, 1, [&](int64_t lo, int64_t hi) { sum += static_cast<int>(hi - lo); });
    ASSERT_EQ(sum.load(), 64) << "job " << job;
  }
}

TEST(ThreadPool, ConcurrentCallersTakeTurns) {
  ThreadPool pool(3);
  std::atomic<int64_t> a{0}, b{0};
  auto caller = [&](std::atomic<int64_t>* out) {
    for (int rep = 0; rep < 200; ++rep) {
      pool.parallel_for(0, 256, 4, [&](int64_t lo, int64_t hi) { *out += hi - lo; });
    }
  };
  std::thread t1(caller, &a), t2(caller, &b);
  t1.join();
  t2.join();
  EXPECT_EQ(a.load(), 200 * 256);
  EXPECT_EQ(b.load(), 200 * 256);
}

TEST(ThreadPool, DefaultPoolWorksThroughFreeFunction) {
  EXPECT_GE(default_pool().size(), 1);
  std::vector<double> out(4097, -1.0);
  parallel_for(0, 4097, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) out[static_cast<size_t>(i)] = 2.0 * static_cast<double>(i);
  });
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 2.0 * static_cast<double>(i));
}

TEST(ThreadPool, ThreadCountComesFromEnvironment) {
  const char* saved = std::getenv("NVHCQ_THREADS");
  std::string saved_value = saved ? saved : "";
  int cores = std::max(cpu_info().logical_cores, 1);
  unsetenv("NVHCQ_THREADS");
  EXPECT_EQ(default_thread_count(), cores);
  setenv("NVHCQ_THREADS", "3", 1);
  EXPECT_EQ(default_thread_count(), 3);
  for (const char* bad : {"0", "-2", "abc", "4x", "999999"}) {
    setenv("NVHCQ_THREADS", bad, 1);
    EXPECT_EQ(default_thread_count(), cores) << bad;
  }
  if (saved) setenv("NVHCQ_THREADS", saved_value.c_str(), 1);
  else unsetenv("NVHCQ_THREADS");
}

}  // namespace
}  // namespace nvhcq::cpu
