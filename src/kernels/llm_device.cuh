// Device helpers the LLM kernels share: streaming loads, L2 prefetches and warp
// reductions.
#pragma once

#ifdef NVHCQ_KERNEL_EMULATION
// tests/kernels/ runs the attention kernels on the CPU warp emulator, which
// supplies the CUDA builtins; the PTX helpers below are left out there.
#include "kernels/emulation/kernel_emulation.h"
#endif
#include "llm_formats.cuh"

// How the threads of a block's work meet: the whole CTA (__syncthreads), or
// in the persistent decode step a subset of its warps at a named barrier.
struct CtaSync {
  __device__ static void sync() { __syncthreads(); }
};

#ifndef NVHCQ_KERNEL_EMULATION
// Weights are read once per token: they skip L1, and in L2 they go first when
// space is needed (an evict_first access policy): activations, the KV cache and
// the kernels' own scratch stay.
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint4 load_stream16(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(evict_first_policy()));
  return v;
}
__device__ __forceinline__ uint2 load_stream8(const void* p) {
  uint2 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;"
      : "=r"(v.x), "=r"(v.y)
      : "l"(p), "l"(evict_first_policy()));
  return v;
}
__device__ __forceinline__ uint32_t load_stream4(const void* p) {
  uint32_t v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(evict_first_policy()));
  return v;
}
__device__ __forceinline__ uint32_t load_stream2(const void* p) {
  unsigned short v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(evict_first_policy()));
  return v;
}

// Asks L2 for the start of `rows` consecutive rows of a matrix (up to
// MV_PREFETCH_BYTES of each of its arrays), one 128-byte line per lane access,
// so they are on their way while the block does other work. A little goes a
// long way: the first kilobyte per warp and array made decode faster than whole
// rows (up to 28 KB per warp, tens of MB per launch that evicted each other in
// L2; docs/perf-notes.md).
#ifndef MV_PREFETCH_BYTES
#define MV_PREFETCH_BYTES 1024
#endif
// Asks L2 for the 128-byte line at p (no registers held, nothing waited for).
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
__device__ __forceinline__ void prefetch_rows(const LlmGpuMatrix& m, int r, int rows) {
  const int lane = threadIdx.x & 31;
  const uint64_t arrays[4] = {m.qs, m.qh, m.scales, m.super};
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    uint64_t bytes = llm_row_bytes(m.format, m.cols, a) * (uint64_t)rows;
    if (bytes > MV_PREFETCH_BYTES) bytes = MV_PREFETCH_BYTES;
    if (bytes == 0) continue;
    const char* p = (const char*)arrays[a] + (size_t)r * llm_row_bytes(m.format, m.cols, a);
    for (uint64_t off = (uint64_t)lane * 128; off < bytes; off += 32 * 128) {
      prefetch_l2(p + off);
    }
  }
}
#else
// On the CPU emulator: plain loads, and no prefetches.
inline uint4 load_stream16(const void* p) { return *(const uint4*)p; }
inline uint2 load_stream8(const void* p) { return *(const uint2*)p; }
inline uint32_t load_stream4(const void* p) { return *(const uint32_t*)p; }
inline uint32_t load_stream2(const void* p) { return *(const uint16_t*)p; }
inline void prefetch_rows(const LlmGpuMatrix&, int, int) {}
inline void prefetch_l2(const void*) {}
#endif  // NVHCQ_KERNEL_EMULATION

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
