// Hopper (sm_90a) GEMM for f16 and bf16 with warpgroup tensor-core
// instructions: C = A * B, A (M x K) and B (K x N) row-major, f32 accumulate, C
// in the input type. Same contract as gemm_mma.cu, for the shapes its aligned
// loader takes (K and N multiples of 8, 16-byte aligned matrices).
//
// A CTA of two warpgroups (256 threads) computes a 128 x 256 tile of C; each
// warpgroup owns 64 rows and issues wgmma.mma_async m64n256k16, which reads
// both operands straight from shared memory through matrix descriptors (no
// ldmatrix, no register fragments for A and B) and keeps its 64 x 256 f32
// accumulator in 128 registers per thread. K advances 64 at a time through a
// 4-slot ring filled by cp.async two k-tiles ahead, while the previous k-tile's
// wgmma batch is still running:
//   iteration kt: wait for tile kt's copies; fence them into the async proxy;
//   barrier (tile kt visible; every warpgroup finished tile kt-2, whose slot is
//   free); copy tile kt+2 into that slot; issue tile kt's four wgmma; wait until
//   only this batch is in flight (tile kt-1 done).
// Shared-memory tiles use the 128-byte swizzle the descriptors name: A K-major
// (rows of 64 elements = 128 bytes, 8-row atoms of 1024 bytes), B N-major
// (atoms of 64 columns x 8 k-rows); the 16-byte chunk index is XORed with the
// row within the atom, which the hardware undoes from the address bits.
// Kernel names: gemm_wgmma_<f16|bf16>_128x256x64_s4.
#include "gemm_prims.cuh"

#ifndef NVHCQ_KERNEL_EMULATION
// Orders this thread's earlier generic-proxy shared-memory writes (cp.async
// results included) before later async-proxy reads (wgmma operands).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Accumulator registers were written by ordinary instructions: make them
// visible to the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N committed wgmma groups of this warpgroup are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pins the accumulators at this point of the program: the compiler may not move
// their reads (the epilogue's conversions) above a wgmma_wait, which would make
// ptxas serialize every wgmma.
__device__ __forceinline__ void wgmma_fence_operands(float acc[128]) {
  NVHCQ_UNROLL
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// d (64 x 256 per warpgroup, f32) += A (64 x 16, K-major, from desc_a) *
// B (16 x 256, N-major, from desc_b). Issued by all 128 threads of a warpgroup;
// completes asynchronously (wgmma_commit / wgmma_wait).
template <bool kBf16>
__device__ __forceinline__ void wgmma_m64n256k16(float d[128], uint64_t desc_a, uint64_t desc_b) {
#define NVHCQ_WGMMA_ASM(TYPE)                                                                      \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                   \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE                                 \
      " {"                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                     \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "           \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "           \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "           \
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "           \
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "           \
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "     \
      "%111, "                                                                                     \
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, " \
      "%127"                                                                                       \
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"                                                         \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])         \
      : "l"(desc_a), "l"(desc_b)                                                                   \
      : "memory")
  if constexpr (kBf16) {
    NVHCQ_WGMMA_ASM("bf16");
  } else {
    NVHCQ_WGMMA_ASM("f16");
  }
#undef NVHCQ_WGMMA_ASM
}
#endif  // NVHCQ_KERNEL_EMULATION

namespace gemm_wgmma {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int kThreads = 256;
constexpr int kAStageBytes = BM * BK * 2;                // 16 KiB
constexpr int kStageBytes = kAStageBytes + BK * BN * 2;  // 48 KiB
constexpr int kBAtomsK = BK / 8;                         // 8-row atoms along K in a B stage
constexpr int kBAtomColumnBytes = kBAtomsK * 1024;       // one 64-column strip of B: 8 KiB
// The launch gives STAGES * kStageBytes + 1024 bytes of dynamic shared memory:
// the ring plus room to align it to 1 KiB (gemm_plan.cpp).

// Byte offset of chunk `chunk` (8 elements of K) of row `row` in an A stage.
__device__ __forceinline__ uint32_t a_offset(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}
// Byte offset of chunk `chunk` (8 columns) of k-row `k` in a B stage: 64-column
// strips of 8 KiB, each 8 atoms of 8 k-rows x 128 bytes.
__device__ __forceinline__ uint32_t b_offset(int k, int chunk) {
  return (chunk >> 3) * kBAtomColumnBytes + (k >> 3) * 1024 + (k & 7) * 128 +
         (((chunk & 7) ^ (k & 7)) << 4);
}

// A wgmma shared-memory matrix descriptor: start address, leading and stride
// byte offsets (16-byte units), 128-byte swizzle (mode 1 in bits 62-63).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t leading_bytes,
                                              uint32_t stride_bytes) {
  return (uint64_t)((addr & 0x3ffff) >> 4) | ((uint64_t)(leading_bytes >> 4) << 16) |
         ((uint64_t)(stride_bytes >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void tile_of(int pid, int tiles_m, int tiles_n, int* tm, int* tn) {
  const int kGroup = 8;
  int per_group = kGroup * tiles_n;
  int group = pid / per_group;
  int first_m = group * kGroup;
  int rows = tiles_m - first_m < kGroup ? tiles_m - first_m : kGroup;
  int in_group = pid - group * per_group;
  *tm = first_m + in_group % rows;
  *tn = in_group / rows;
}

template <bool kBf16>
__device__ __forceinline__ void gemm(uint16_t* __restrict__ C, const uint16_t* __restrict__ A,
                                     const uint16_t* __restrict__ B, int M, int N, int K) {
  const int tid = threadIdx.x, lane = tid & 31;
  const int wg = tid >> 7;  // warpgroup: rows wg*64 .. wg*64+63 of the tile
  const int warp_in_wg = (tid >> 5) & 3;
  int tm, tn;
  tile_of(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, &tm, &tn);
  const int m0 = tm * BM, n0 = tn * BN;

  // The swizzle is a function of address bits 4-9: slots start on 1 KiB boundaries.
  const uint32_t smem_base = (smem_addr(dynamic_smem()) + 1023u) & ~1023u;

  auto load_stage = [&](int slot, int k0) {
    const uint32_t a_dst = smem_base + slot * kStageBytes;
    const uint32_t b_dst = a_dst + kAStageBytes;
    NVHCQ_UNROLL
    for (int i = 0; i < BM * (BK / 8) / kThreads; ++i) {
      int idx = tid + i * kThreads;
      int row = idx >> 3, chunk = idx & 7;
      int gm = m0 + row, gk = k0 + chunk * 8;
      bool inside = gm < M && gk < K;
      cp_async_16(a_dst + a_offset(row, chunk), inside ? A + (uint64_t)gm * K + gk : A,
                  inside ? 16 : 0);
    }
    NVHCQ_UNROLL
    for (int i = 0; i < BK * (BN / 8) / kThreads; ++i) {
      int idx = tid + i * kThreads;
      int k = idx / (BN / 8), chunk = idx % (BN / 8);
      int gk = k0 + k, gn = n0 + chunk * 8;
      bool inside = gk < K && gn < N;
      cp_async_16(b_dst + b_offset(k, chunk), inside ? B + (uint64_t)gk * N + gn : B,
                  inside ? 16 : 0);
    }
  };

  float acc[128];
  NVHCQ_UNROLL
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

  const int k_tiles = (K + BK - 1) / BK;
  NVHCQ_UNROLL
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < k_tiles) load_stage(s, s * BK);
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Committed groups: STAGES-2+kt; the oldest kt+1 (tile kt among them) are done.
    cp_async_wait<STAGES - 3>();
    fence_proxy_async();
    __syncthreads();
    int next = kt + STAGES - 2;
    if (next < k_tiles) load_stage(next % STAGES, next * BK);
    cp_async_commit();

    const uint32_t a_slot = smem_base + (kt % STAGES) * kStageBytes;
    const uint32_t b_slot = a_slot + kAStageBytes;
    wgmma_fence_operands(acc);
    wgmma_fence();
    NVHCQ_UNROLL
    for (int kk = 0; kk < BK / 16; ++kk) {
      // A: this warpgroup's 64 rows (8 atoms, 1 KiB apart), k 16*kk.. (32 bytes into each row).
      uint64_t da = smem_desc(a_slot + wg * 64 * 128 + kk * 32, 16, 1024);
      // B: k-rows 16*kk.. (two atoms, 1 KiB apart), all 256 columns (strips 8 KiB apart).
      uint64_t db = smem_desc(b_slot + kk * 2 * 1024, kBAtomColumnBytes, 1024);
      wgmma_m64n256k16<kBf16>(acc, da, db);
    }
    wgmma_commit();
    wgmma_wait<1>();
    wgmma_fence_operands(acc);
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  cp_async_wait<0>();

  // Accumulator layout: warp w of the warpgroup holds rows 16w..16w+15; lane l
  // holds, for each 8-column block j, (row l/4, columns 8j + 2(l%4), +1) in
  // acc[4j], acc[4j+1] and the same columns 8 rows down in acc[4j+2], acc[4j+3].
  const int row_base = m0 + wg * 64 + warp_in_wg * 16 + (lane >> 2);
  NVHCQ_UNROLL
  for (int j = 0; j < BN / 8; ++j) {
    int col = n0 + j * 8 + (lane & 3) * 2;
    if (col >= N) continue;
    NVHCQ_UNROLL
    for (int half = 0; half < 2; ++half) {
      int row = row_base + half * 8;
      if (row >= M) continue;
      uint16_t lo = float_to_bits16<kBf16>(acc[4 * j + 2 * half]);
      uint16_t hi = float_to_bits16<kBf16>(acc[4 * j + 2 * half + 1]);
      *(uint32_t*)(C + (uint64_t)row * N + col) = (uint32_t)lo | ((uint32_t)hi << 16);
    }
  }
}

}  // namespace gemm_wgmma

extern "C" __global__ void __launch_bounds__(256, 1)
    gemm_wgmma_f16_128x256x64_s4(uint16_t* C, const uint16_t* A, const uint16_t* B, int M, int N,
                                 int K) {
  gemm_wgmma::gemm<false>(C, A, B, M, N, K);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    gemm_wgmma_bf16_128x256x64_s4(uint16_t* C, const uint16_t* A, const uint16_t* B, int M, int N,
                                  int K) {
  gemm_wgmma::gemm<true>(C, A, B, M, N, K);
}
