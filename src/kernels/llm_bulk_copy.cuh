// Bulk copies from global to shared memory whose completion is counted on an
// mbarrier (sm_90's cp.async.bulk): the copy engine of the SM moves the bytes,
// so a block can have tens of kilobytes on their way without holding a
// register for them. The persistent decode step streams its weights this way,
// and a matrix-vector block stages its warps' first rows before it waits for
// the launch ahead (llm_matvec_stage.cuh).
//
// LLM_HAS_BULK_COPY says whether the target has them (sm_90 and newer, and the
// CPU warp emulator, which lands a copy when the mbarrier is waited for, so a
// missing wait reads poison).
#pragma once

#include "llm_device.cuh"

#if defined(NVHCQ_KERNEL_EMULATION) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900)
#define LLM_HAS_BULK_COPY 1
#else
#define LLM_HAS_BULK_COPY 0
#endif

#if defined(NVHCQ_KERNEL_EMULATION)

inline void mbarrier_init(uint64_t* bar, uint32_t count) { ::nvhcq::emu::mbarrier_init(bar, count); }
inline void mbarrier_init_fence() {}
inline void mbarrier_expect_bytes(uint64_t* bar, uint32_t bytes) { ::nvhcq::emu::mbarrier_expect_tx(bar, bytes, true); }
inline void mbarrier_add_bytes(uint64_t* bar, uint32_t bytes) { ::nvhcq::emu::mbarrier_expect_tx(bar, bytes, false); }
inline void mbarrier_arrive(uint64_t* bar) { ::nvhcq::emu::mbarrier_arrive(bar); }
inline void mbarrier_wait(uint64_t* bar, uint32_t parity) { ::nvhcq::emu::mbarrier_wait(bar, parity); }
inline void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  ::nvhcq::emu::bulk_copy(dst, src, bytes, bar);
}

#elif LLM_HAS_BULK_COPY

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  uint32_t a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
// Makes initialized mbarriers visible to the copy engine (before the first copy).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Arrives once and expects `bytes` more to land before the phase completes.
__device__ __forceinline__ void mbarrier_expect_bytes(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
// Expects `bytes` more without arriving.
__device__ __forceinline__ void mbarrier_add_bytes(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
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

#endif
