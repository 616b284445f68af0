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
#include "wgmma_prims.cuh"

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
      uint64_t da = wgmma_smem_desc(a_slot + wg * 64 * 128 + kk * 32, 16, 1024);
      // B: k-rows 16*kk.. (two atoms, 1 KiB apart), all 256 columns (strips 8 KiB apart).
      uint64_t db = wgmma_smem_desc(b_slot + kk * 2 * 1024, kBAtomColumnBytes, 1024);
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
