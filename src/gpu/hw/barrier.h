#pragma once
// CPU-side ordering before a doorbell: pushbuffers and GPFIFO entries are written
// through write-combining mappings, which must be drained before the doorbell
// write (uncached MMIO) lets the GPU fetch them.

#include <atomic>

namespace nvhcq::gpu::hw {

inline void flush_writes_before_doorbell() {
#if defined(__x86_64__)
  __builtin_ia32_sfence();
  std::atomic_thread_fence(std::memory_order_seq_cst);
#elif defined(__aarch64__)
  __asm__ volatile("dsb st" ::: "memory");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Spin-wait hint.
inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield" ::: "memory");
#endif
}

}  // namespace nvhcq::gpu::hw
