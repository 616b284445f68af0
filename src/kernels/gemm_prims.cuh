// Warp-level building blocks of the tensor-core GEMM kernels: asynchronous
// global->shared copies (cp.async), shared->register matrix loads (ldmatrix) and
// the m16n8k16 tensor-core product (mma.sync), each as one inline-PTX function.
//
// tests/kernels/ compiles the GEMM kernels with the host C++ compiler and runs
// them on the CPU (a warp emulator), to check their indexing where no GPU is
// present. It defines NVHCQ_KERNEL_EMULATION and supplies these same functions
// itself; nothing else in a kernel may use inline PTX or CUDA builtins beyond
// threadIdx/blockIdx/blockDim/gridDim and __syncthreads().
#pragma once

#ifdef NVHCQ_KERNEL_EMULATION
#include "kernels/emulation/kernel_emulation.h"
#define NVHCQ_UNROLL
#define NVHCQ_NO_UNROLL
#else
// "#pragma unroll" that the host compiler of the emulation does not warn about.
#define NVHCQ_UNROLL _Pragma("unroll")
#define NVHCQ_NO_UNROLL _Pragma("unroll 1")

#include "common.cuh"

// The dynamic shared memory of the running block (its size is the launch's
// dynamic_shared_bytes), 128-byte aligned for swizzled tiles.
__device__ __forceinline__ uint8_t* dynamic_smem() {
  extern __shared__ __align__(128) uint8_t nvhcq_dynamic_smem[];
  return nvhcq_dynamic_smem;
}

// A generic pointer into shared memory as the 32-bit shared-window address that
// cp.async and ldmatrix take.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  uint32_t a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// Copies 16 bytes global->shared without passing through registers. Only the
// first `src_bytes` (0..16) are read; the rest of the 16 are zero-filled, so a
// tile edge needs no separate path. Bypasses L1 (.cg): tiles are read once per CTA.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

// Closes the group of cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8x8 matrices of 16-bit elements from shared memory: lanes 8i..8i+7 give the
// addresses of matrix i's eight 16-byte rows; r[i] receives, in lane l, elements
// (row l/4, columns 2(l%4), 2(l%4)+1) of matrix i.
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// The same, transposed: r[i] receives, in lane l, elements (rows 2(l%4) and
// 2(l%4)+1, column l/4) of matrix i.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// d += a (16x16, row-major fragment) * b (16x8, column-major fragment), f32
// accumulate. Fragment layouts are the PTX ISA's for m16n8k16 with 16-bit inputs.
template <bool kBf16>
__device__ __forceinline__ void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}
#endif  // NVHCQ_KERNEL_EMULATION

// 16-bit element <-> f32, by element type (f16 or bf16).
template <bool kBf16>
__device__ __forceinline__ float bits16_to_float(uint16_t v) {
  if constexpr (kBf16) {
    return bf16_to_float(v);
  } else {
    return half_to_float(v);
  }
}
template <bool kBf16>
__device__ __forceinline__ uint16_t float_to_bits16(float f) {
  if constexpr (kBf16) {
    return float_to_bf16(f);
  } else {
    return float_to_half(f);
  }
}
