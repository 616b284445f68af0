// Bulk copies from global to shared memory by the TMA (cp.async.bulk, sm_90),
// their completion counted on an mbarrier in shared memory. A copy is one
// instruction of one thread whatever its size, and unlike the same bytes
// loaded into registers it holds no registers while it is in flight. Under
// NVHCQ_KERNEL_EMULATION (tests/kernels/) a copy is a memcpy at once and the
// mbarrier waits return.
#pragma once

#include "llm_device.cuh"

#ifndef NVHCQ_KERNEL_EMULATION
__device__ __forceinline__ uint32_t shared_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
// Makes the thread's mbarrier.init visible to the TMA and the block's other
// threads (before the first copy counted on it).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbarrier_expect_bytes(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}
// Waits until the phase with this parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred done;\n WAIT:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT;\n}" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
// bytes (a multiple of 16) from global src (16-byte aligned) to shared dst,
// counted on bar; weights go first when L2 needs room.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar)), "l"(evict_first_policy())
      : "memory");
}
#else
#include <cstring>

inline void mbarrier_init(uint64_t* bar, uint32_t) { *bar = 0; }
inline void mbarrier_init_fence() {}
inline void mbarrier_expect_bytes(uint64_t*, uint32_t) {}
inline void mbarrier_arrive(uint64_t*) {}
inline void mbarrier_wait(uint64_t*, uint32_t) {}
inline void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t*) { std::memcpy(dst, src, bytes); }
#endif
