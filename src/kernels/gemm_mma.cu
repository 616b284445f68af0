// Tensor-core GEMM for f16 and bf16: C = A * B with A (M x K), B (K x N) and C
// (M x N) row-major, products accumulated in f32 and C rounded once to the
// input type. Any M, N, K.
//
// Each CTA computes a BM x BN tile of C; its warps each own a WM x WN sub-tile
// held in registers as m16n8 accumulator fragments. K advances BK at a time
// through a STAGES-deep ring of shared-memory tiles filled by cp.async, so the
// loads of later k-tiles overlap the tensor-core work on the current one.
// Fragments come out of shared memory with ldmatrix (A as stored, B transposed
// on the fly), and the tiles are XOR-swizzled in 16-byte chunks so that neither
// the cp.async writes nor the ldmatrix reads conflict on banks.
//
// Two loaders: the aligned one (K and N multiples of 8, 16-byte aligned
// pointers) copies 16-byte chunks with cp.async, zero-filling past the matrix
// edges; the generic one moves single elements through registers, for shapes
// the first cannot address. Kernel names: gemm_mma_<f16|bf16>_<BM>x<BN>x<BK>_s<STAGES>
// and gemm_mma_<f16|bf16>_generic; src/kernels/gemm_plan.cpp picks one and its
// launch dimensions.
#include "gemm_prims.cuh"

namespace gemm_mma {

// Byte offset of 16-byte chunk `chunk` (8 elements along K) of row `row` in an
// A stage of BK-element rows. The XOR spreads the 8 rows one ldmatrix reads (and
// the rows a warp's cp.async writes) over all 32 banks.
template <int BK>
__device__ __forceinline__ uint32_t a_offset(int row, int chunk) {
  static_assert(BK == 32 || BK == 64, "A rows of 64 or 128 bytes");
  if constexpr (BK == 64) {
    return row * 128 + ((chunk ^ (row & 7)) << 4);
  } else {
    return row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4);
  }
}

// Byte offset of chunk `chunk` (8 elements along N) of row `k` in a B stage of
// BN-element rows. Rows are multiples of 128 bytes; eight consecutive k rows at
// one logical chunk land in eight different 16-byte bank groups.
template <int BN>
__device__ __forceinline__ uint32_t b_offset(int k, int chunk) {
  static_assert(BN % 64 == 0, "B rows of a multiple of 128 bytes");
  return k * (BN * 2) + ((chunk ^ (k & 7)) << 4);
}

// The tile (tm, tn) CTA `pid` computes. CTAs run in groups of 8 tile rows, all
// columns of the group before the next: 8 rows of A and the whole of B stay
// in L2 while they are reused.
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

template <bool kBf16, int BM, int BN, int BK, int WM, int WN, int STAGES, bool kAligned>
__device__ __forceinline__ void gemm(uint16_t* __restrict__ C, const uint16_t* __restrict__ A,
                                     const uint16_t* __restrict__ B, int M, int N, int K) {
  constexpr int kWarpsN = BN / WN;
  constexpr int kThreads = (BM / WM) * kWarpsN * 32;
  constexpr int FM = WM / 16;  // m16 fragments per warp
  constexpr int FN = WN / 8;   // n8 fragments per warp
  constexpr int kAStageBytes = BM * BK * 2;
  constexpr int kStageBytes = kAStageBytes + BK * BN * 2;
  constexpr int kAChunks = BK / 8, kBChunks = BN / 8;  // 16-byte chunks per row
  static_assert(FN % 2 == 0, "B fragments are loaded two n8 tiles at a time");
  static_assert(BK % 16 == 0 && STAGES >= 2, "k16 steps, at least double buffering");
  static_assert((BM * kAChunks) % kThreads == 0 && (BK * kBChunks) % kThreads == 0,
                "every thread copies the same number of chunks");

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  int tm, tn;
  tile_of(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, &tm, &tn);
  const int m0 = tm * BM, n0 = tn * BN;

  uint8_t* smem = dynamic_smem();
  const uint32_t smem_base = smem_addr(smem);

  // Fills ring slot `stage` with the k-tile starting at k0 (zeros past the edges).
  auto load_stage = [&](int stage, int k0) {
    if constexpr (kAligned) {
      const uint32_t a_dst = smem_base + stage * kStageBytes;
      const uint32_t b_dst = a_dst + kAStageBytes;
      NVHCQ_UNROLL
      for (int i = 0; i < BM * kAChunks / kThreads; ++i) {
        int idx = tid + i * kThreads;
        int row = idx / kAChunks, chunk = idx % kAChunks;
        int gm = m0 + row, gk = k0 + chunk * 8;
        bool inside = gm < M && gk < K;
        const uint16_t* src = inside ? A + (uint64_t)gm * K + gk : A;
        cp_async_16(a_dst + a_offset<BK>(row, chunk), src, inside ? 16 : 0);
      }
      NVHCQ_UNROLL
      for (int i = 0; i < BK * kBChunks / kThreads; ++i) {
        int idx = tid + i * kThreads;
        int k = idx / kBChunks, chunk = idx % kBChunks;
        int gk = k0 + k, gn = n0 + chunk * 8;
        bool inside = gk < K && gn < N;
        const uint16_t* src = inside ? B + (uint64_t)gk * N + gn : B;
        cp_async_16(b_dst + b_offset<BN>(k, chunk), src, inside ? 16 : 0);
      }
    } else {
      uint8_t* a_dst = smem + stage * kStageBytes;
      uint8_t* b_dst = a_dst + kAStageBytes;
      for (int idx = tid; idx < BM * BK; idx += kThreads) {
        int row = idx / BK, col = idx % BK;
        int gm = m0 + row, gk = k0 + col;
        uint16_t v = (gm < M && gk < K) ? A[(uint64_t)gm * K + gk] : (uint16_t)0;
        *(uint16_t*)(a_dst + a_offset<BK>(row, col / 8) + (col % 8) * 2) = v;
      }
      for (int idx = tid; idx < BK * BN; idx += kThreads) {
        int k = idx / BN, col = idx % BN;
        int gk = k0 + k, gn = n0 + col;
        uint16_t v = (gk < K && gn < N) ? B[(uint64_t)gk * N + gn] : (uint16_t)0;
        *(uint16_t*)(b_dst + b_offset<BN>(k, col / 8) + (col % 8) * 2) = v;
      }
    }
  };

  float acc[FM][FN][4];
  NVHCQ_UNROLL
  for (int i = 0; i < FM; ++i) NVHCQ_UNROLL
  for (int j = 0; j < FN; ++j) NVHCQ_UNROLL
  for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  const int k_tiles = (K + BK - 1) / BK;
  NVHCQ_UNROLL
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s * BK);
    cp_async_commit();  // one group per slot, empty or not, keeps the wait counts simple
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Groups committed so far: STAGES-1+kt; the oldest kt+1 (tile kt among them) are done.
    cp_async_wait<STAGES - 2>();
    // Tile kt is visible to every thread, and every warp is done with tile kt-1,
    // whose slot the load below refills.
    __syncthreads();
    int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next * BK);
    cp_async_commit();

    const uint32_t a_base = smem_base + (kt % STAGES) * kStageBytes;
    const uint32_t b_base = a_base + kAStageBytes;
    NVHCQ_UNROLL
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t af[FM][4], bf[FN][2];
      NVHCQ_UNROLL
      for (int i = 0; i < FM; ++i) {
        // Lanes 0-15 address rows 0-15 at k 0-7, lanes 16-31 the same rows at k 8-15:
        // the four matrices are exactly the m16k16 A fragment's four registers.
        int row = warp_m * WM + i * 16 + (lane & 15);
        ldmatrix_x4(af[i], a_base + a_offset<BK>(row, kk * 2 + (lane >> 4)));
      }
      NVHCQ_UNROLL
      for (int j = 0; j < FN; j += 2) {
        // Transposed: matrices (k 0-7 | k 8-15) x (n 0-7 | n 8-15) are the k16n8
        // B fragments of two adjacent n8 tiles.
        int k = kk * 16 + (lane & 15);
        int chunk = (warp_n * WN + j * 8) / 8 + (lane >> 4);
        uint32_t r[4];
        ldmatrix_x4_trans(r, b_base + b_offset<BN>(k, chunk));
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
      }
      NVHCQ_UNROLL
      for (int i = 0; i < FM; ++i) NVHCQ_UNROLL
      for (int j = 0; j < FN; ++j) mma_m16n8k16<kBf16>(acc[i][j], af[i], bf[j]);
    }
  }
  cp_async_wait<0>();  // no copy may land in shared memory after the CTA exits

  // Accumulator fragment: lane l holds (row l/4, columns 2(l%4), +1) and the same
  // columns 8 rows further down.
  NVHCQ_UNROLL
  for (int i = 0; i < FM; ++i) {
    NVHCQ_UNROLL
    for (int j = 0; j < FN; ++j) {
      int col = n0 + warp_n * WN + j * 8 + (lane & 3) * 2;
      NVHCQ_UNROLL
      for (int half = 0; half < 2; ++half) {
        int row = m0 + warp_m * WM + i * 16 + (lane >> 2) + half * 8;
        if (row >= M) continue;
        uint16_t lo = float_to_bits16<kBf16>(acc[i][j][half * 2]);
        uint16_t hi = float_to_bits16<kBf16>(acc[i][j][half * 2 + 1]);
        uint16_t* dst = C + (uint64_t)row * N + col;
        if constexpr (kAligned) {
          // N is a multiple of 8 and C 16-byte aligned: the pair is whole and 4-byte aligned.
          if (col < N) *(uint32_t*)dst = (uint32_t)lo | ((uint32_t)hi << 16);
        } else {
          if (col < N) dst[0] = lo;
          if (col + 1 < N) dst[1] = hi;
        }
      }
    }
  }
}

}  // namespace gemm_mma

// One kernel per (type, tile shape): the arguments are (C, A, B, M, N, K).
#define NVHCQ_GEMM_MMA(name, bf16, BM, BN, BK, WM, WN, STAGES, aligned, min_blocks)    \
  extern "C" __global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, min_blocks) \
      name(uint16_t* C, const uint16_t* A, const uint16_t* B, int M, int N, int K) {   \
    gemm_mma::gemm<bf16, BM, BN, BK, WM, WN, STAGES, aligned>(C, A, B, M, N, K);       \
  }

#define NVHCQ_GEMM_MMA_TYPES(type, bf16)                                                  \
  NVHCQ_GEMM_MMA(gemm_mma_##type##_128x256x32_s4, bf16, 128, 256, 32, 64, 64, 4, true, 1) \
  NVHCQ_GEMM_MMA(gemm_mma_##type##_128x256x64_s3, bf16, 128, 256, 64, 64, 64, 3, true, 1) \
  NVHCQ_GEMM_MMA(gemm_mma_##type##_128x128x32_s4, bf16, 128, 128, 32, 64, 64, 4, true, 2) \
  NVHCQ_GEMM_MMA(gemm_mma_##type##_64x64x32_s4, bf16, 64, 64, 32, 32, 32, 4, true, 4)     \
  NVHCQ_GEMM_MMA(gemm_mma_##type##_generic, bf16, 64, 64, 32, 32, 32, 2, false, 4)

NVHCQ_GEMM_MMA_TYPES(f16, false)
NVHCQ_GEMM_MMA_TYPES(bf16, true)
