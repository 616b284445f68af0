#pragma once
// Runs nvhcq's CUDA C kernels on the CPU, to test their indexing where no GPU is
// present (CI). A kernel file is compiled by the host compiler with
// NVHCQ_KERNEL_EMULATION defined; its gemm_prims.cuh or llm_device.cuh then
// includes this header instead of the PTX primitives. Every thread of a block
// is a fiber; blocks run one after another. The warp-collective primitives
// (ldmatrix, mma.sync) gather all 32 lanes and compute exactly what the PTX ISA
// specifies for each lane; cp.async copies land in shared memory only when a
// cp.async.wait_group lets them (so a missing wait reads poison); shared memory
// (dynamic and static) starts every block poisoned; every dynamic shared-memory
// address and every cp.async source is bounds-checked. A violation or a
// deadlock (threads waiting at different barriers) fails the launch with a
// message.

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "cpu/half.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
// A kernel's static __shared__ variables: blocks run one after another, so one
// static per variable serves them all. They live in a section of their own,
// which launch() poisons before every block as it does dynamic shared memory.
#define __shared__ static __attribute__((section("nvhcq_emu_shared")))

namespace nvhcq::emu {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

const Dim3& thread_index();
const Dim3& block_index();
const Dim3& block_dim();
const Dim3& grid_dim();

void sync_threads();
uint8_t* shared_memory();
uint32_t shared_offset(const void* p);
// p, after checking that it points into shared memory and is `bytes`-aligned
// (a violation fails the launch).
const void* aligned_shared(const void* p, uint32_t bytes);
void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes);
void cp_async_commit();
void cp_async_wait(int pending);
void ldmatrix_x4(uint32_t r[4], uint32_t addr, bool transpose);
void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2], bool bf16);
// __shfl_xor_sync over the whole warp: each lane gets the value of lane ^ mask.
uint32_t shfl_xor(uint32_t value, int mask);
// __shfl_sync: each lane gets the value of lane src_lane.
uint32_t shfl(uint32_t value, int src_lane);
// Warpgroup (128 threads) wgmma: queued at issue, executed -- reading shared
// memory then -- by the wait that retires its commit group.
void wgmma(float* d, uint64_t desc_a, uint64_t desc_b, int n, bool bf16, bool transpose_b);
void wgmma_commit();
void wgmma_wait(int pending);

struct LaunchConfig {
  Dim3 grid, block;
  uint32_t shared_bytes = 0;
  // cp.async data lands at the wait that retires it (true), or at once (false).
  bool deferred_copies = true;
};

// Runs `kernel` once per thread of every block. Returns an empty string, or what
// went wrong (the first violation, or a deadlock).
std::string launch(const LaunchConfig& config, const std::function<void()>& kernel);

// Shared-memory bank conflicts of the last launch's ldmatrix: each 8x8 matrix is
// one 128-byte access when its eight rows fall in eight different 16-byte bank
// groups; every further access a matrix needs counts as one extra wavefront.
struct Stats {
  uint64_t ldmatrix_matrices = 0;
  uint64_t ldmatrix_extra_wavefronts = 0;
};
Stats last_stats();

// Global memory cp.async may read: tests register their buffers before a launch.
void register_global(const void* p, size_t bytes);
void clear_globals();

}  // namespace nvhcq::emu

#define threadIdx (::nvhcq::emu::thread_index())
#define blockIdx (::nvhcq::emu::block_index())
#define blockDim (::nvhcq::emu::block_dim())
#define gridDim (::nvhcq::emu::grid_dim())

// A kernel's trap ends the process here as it ends the launch on the GPU.
[[noreturn]] inline void __trap() { std::abort(); }
inline void __syncthreads() {
  ::nvhcq::emu::sync_threads();
}
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  return ::nvhcq::cpu::bits_float(::nvhcq::emu::shfl_xor(::nvhcq::cpu::float_bits(v), mask));
}
inline int __shfl_xor_sync(unsigned, int v, int mask) {
  return static_cast<int>(::nvhcq::emu::shfl_xor(static_cast<uint32_t>(v), mask));
}
inline float __shfl_sync(unsigned, float v, int src_lane) {
  return ::nvhcq::cpu::bits_float(::nvhcq::emu::shfl(::nvhcq::cpu::float_bits(v), src_lane));
}
// 64-bit values as two 32-bit shuffles, as the hardware does them.
inline unsigned long long __shfl_xor_sync(unsigned, unsigned long long v, int mask) {
  const uint64_t lo = ::nvhcq::emu::shfl_xor(static_cast<uint32_t>(v), mask);
  const uint64_t hi = ::nvhcq::emu::shfl_xor(static_cast<uint32_t>(v >> 32), mask);
  return lo | hi << 32;
}
// Whole-warp votes and reductions, from the emulated shuffles.
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
  for (int o = 16; o > 0; o >>= 1) {
    const uint32_t other = ::nvhcq::emu::shfl_xor(v, o);
    v = other > v ? other : v;
  }
  return v;
}
inline unsigned __ballot_sync(unsigned, int predicate) {
  uint32_t bits = predicate ? 1u << (::nvhcq::emu::thread_index().x & 31) : 0u;
  for (int o = 16; o > 0; o >>= 1) bits |= ::nvhcq::emu::shfl_xor(bits, o);
  return bits;
}
inline int __ffs(unsigned v) { return v == 0 ? 0 : __builtin_ctz(v) + 1; }
inline double __shfl_xor_sync(unsigned, double v, int mask) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  bits = __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(bits), mask);
  std::memcpy(&v, &bits, 8);
  return v;
}

struct alignas(8) float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) uint4 {
  uint32_t x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) {
  return float4{x, y, z, w};
}
inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  return uint4{x, y, z, w};
}
struct alignas(8) uint2 {
  uint32_t x, y;
};
inline uint2 make_uint2(uint32_t x, uint32_t y) {
  return uint2{x, y};
}
// Round to nearest, ties to even (the default rounding mode).
inline int __float2int_rn(float f) {
  return static_cast<int>(std::nearbyint(f));
}
inline uint32_t __float_as_uint(float f) {
  return ::nvhcq::cpu::float_bits(f);
}
inline float __uint_as_float(uint32_t u) {
  return ::nvhcq::cpu::bits_float(u);
}
inline float __int_as_float(int i) {
  return ::nvhcq::cpu::bits_float(static_cast<uint32_t>(i));
}
inline int min(int a, int b) {
  return a < b ? a : b;
}

// One rounding per operation, never contracted into an FMA with a neighbour
// (the host compiler contracts float expressions at -O3): the volatile is the
// rounded float.
inline float __fmul_rn(float a, float b) {
  volatile float r = a * b;
  return r;
}
inline float __fadd_rn(float a, float b) {
  volatile float r = a + b;
  return r;
}
inline float __fsub_rn(float a, float b) {
  volatile float r = a - b;
  return r;
}

// Memory ordering and atomics: fibers switch only at barriers and warp
// collectives, so plain loads and read-modify-writes are already atomic and
// ordered.
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old + v;
  return old;
}
// (uint64_t is unsigned long here, unsigned long long under NVRTC.)
template <class T>
inline T atomicMax(T* p, unsigned long long v) {
  const T old = *p;
  *p = old > v ? old : static_cast<T>(v);
  return old;
}

// common.cuh's conversions.
inline float half_to_float(uint16_t h) {
  return ::nvhcq::cpu::half_to_float(h);
}
inline uint16_t float_to_half(float f) {
  return ::nvhcq::cpu::float_to_half(f);
}
inline float bf16_to_float(uint16_t b) {
  return ::nvhcq::cpu::bf16_to_float(b);
}
inline uint16_t float_to_bf16(float f) {
  return ::nvhcq::cpu::float_to_bf16(f);
}

// gemm_prims.cuh's primitives.
inline uint8_t* dynamic_smem() {
  return ::nvhcq::emu::shared_memory();
}
inline uint32_t smem_addr(const void* p) {
  return ::nvhcq::emu::shared_offset(p);
}
inline void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  ::nvhcq::emu::cp_async_16(dst, src, src_bytes);
}
inline void cp_async_commit() {
  ::nvhcq::emu::cp_async_commit();
}
template <int N>
inline void cp_async_wait() {
  ::nvhcq::emu::cp_async_wait(N);
}
inline void ldmatrix_x4(uint32_t r[4], uint32_t addr) {
  ::nvhcq::emu::ldmatrix_x4(r, addr, false);
}
inline void ldmatrix_x4_trans(uint32_t r[4], uint32_t addr) {
  ::nvhcq::emu::ldmatrix_x4(r, addr, true);
}
template <bool kBf16>
inline void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  ::nvhcq::emu::mma_m16n8k16(d, a, b, kBf16);
}

// wgmma_prims.cuh's primitives.
inline void fence_proxy_async() {}
inline void wgmma_fence() {}
template <int N>
inline void wgmma_fence_operands(float (&)[N]) {}
inline void wgmma_commit() {
  ::nvhcq::emu::wgmma_commit();
}
template <int N>
inline void wgmma_wait() {
  ::nvhcq::emu::wgmma_wait(N);
}
template <bool kBf16, bool kBKMajor = false>
inline void wgmma_m64n256k16(float d[128], uint64_t desc_a, uint64_t desc_b) {
  ::nvhcq::emu::wgmma(d, desc_a, desc_b, 256, kBf16, !kBKMajor);
}
template <bool kBf16, bool kBKMajor = false>
inline void wgmma_m64n128k16(float d[64], uint64_t desc_a, uint64_t desc_b) {
  ::nvhcq::emu::wgmma(d, desc_a, desc_b, 128, kBf16, !kBKMajor);
}
