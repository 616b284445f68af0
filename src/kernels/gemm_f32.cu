// f32 GEMM on the CUDA cores (SIMT): C = A * B with A (M x K), B (K x N) and C
// (M x N) row-major, any M, N, K.
//
// Each CTA of 256 threads computes a BM x BN tile of C, each thread a TM x TN
// block of it in registers (as 4x4 pieces spread BM/2 and BN/2 apart, so that
// a warp's shared-memory reads are broadcasts or distinct banks). K advances BK
// at a time: A's tile is stored transposed (k-major, padded against bank
// conflicts), B's as it is, and the next k-tile is read into registers while the
// current one is multiplied (two shared-memory buffers, one barrier per k-tile).
//
// The vectorized loader reads float4s (K and N multiples of 4, 16-byte aligned
// pointers); the scalar one reads single elements, for any shape. Kernel names:
// gemm_f32_<BM>x<BN> and gemm_f32_<BM>x<BN>_scalar.
#include "gemm_prims.cuh"

namespace gemm_f32 {

template <int BM, int BN, int TM, int TN, bool kVec4>
__device__ __forceinline__ void gemm(float* __restrict__ C, const float* __restrict__ A,
                                     const float* __restrict__ B, int M, int N, int K) {
  constexpr int BK = 8;
  constexpr int kThreads = 256;
  constexpr int kThreadsN = BN / TN;  // threads along N
  constexpr int kPadA = 4;            // transposed A rows are BM+4 floats: no store conflicts
  constexpr int kLdA = BM + kPadA;
  constexpr int kPiecesM = TM / 4, kPiecesN = TN / 4;
  constexpr int kAVec = BM * BK / 4, kBVec = BK * BN / 4;  // float4s per tile
  constexpr int kALoads = (kAVec + kThreads - 1) / kThreads;
  constexpr int kBLoads = (kBVec + kThreads - 1) / kThreads;
  static_assert((BM / TM) * (BN / TN) == kThreads, "one TM x TN block per thread");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "4x4 pieces");

  float* As = (float*)dynamic_smem();  // [2][BK][kLdA]
  float* Bs = As + 2 * BK * kLdA;      // [2][BK][BN]

  const int tid = threadIdx.x;
  const int tx = tid % kThreadsN, ty = tid / kThreadsN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float a_next[kALoads][4] = {}, b_next[kBLoads][4] = {};

  // Reads k-tile k0 into registers: A as (row, 4 consecutive k), B as (k, 4 consecutive n).
  auto fetch = [&](int k0) {
    NVHCQ_UNROLL
    for (int i = 0; i < kALoads; ++i) {
      int idx = tid + i * kThreads;
      int row = idx / (BK / 4), k = (idx % (BK / 4)) * 4;
      int gm = m0 + row, gk = k0 + k;
      if (idx >= kAVec) continue;
      if constexpr (kVec4) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (gm < M && gk < K) v = *(const float4*)(A + (uint64_t)gm * K + gk);
        a_next[i][0] = v.x;
        a_next[i][1] = v.y;
        a_next[i][2] = v.z;
        a_next[i][3] = v.w;
      } else {
        NVHCQ_UNROLL
        for (int e = 0; e < 4; ++e) {
          a_next[i][e] = (gm < M && gk + e < K) ? A[(uint64_t)gm * K + gk + e] : 0.0f;
        }
      }
    }
    NVHCQ_UNROLL
    for (int i = 0; i < kBLoads; ++i) {
      int idx = tid + i * kThreads;
      int k = idx / (BN / 4), col = (idx % (BN / 4)) * 4;
      int gk = k0 + k, gn = n0 + col;
      if (idx >= kBVec) continue;
      if constexpr (kVec4) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (gk < K && gn < N) v = *(const float4*)(B + (uint64_t)gk * N + gn);
        b_next[i][0] = v.x;
        b_next[i][1] = v.y;
        b_next[i][2] = v.z;
        b_next[i][3] = v.w;
      } else {
        NVHCQ_UNROLL
        for (int e = 0; e < 4; ++e) {
          b_next[i][e] = (gk < K && gn + e < N) ? B[(uint64_t)gk * N + gn + e] : 0.0f;
        }
      }
    }
  };
  // Writes the fetched tile into shared buffer `buf`.
  auto store = [&](int buf) {
    float* as = As + buf * BK * kLdA;
    float* bs = Bs + buf * BK * BN;
    NVHCQ_UNROLL
    for (int i = 0; i < kALoads; ++i) {
      int idx = tid + i * kThreads;
      if (idx >= kAVec) continue;
      int row = idx / (BK / 4), k = (idx % (BK / 4)) * 4;
      NVHCQ_UNROLL
      for (int e = 0; e < 4; ++e) as[(k + e) * kLdA + row] = a_next[i][e];
    }
    NVHCQ_UNROLL
    for (int i = 0; i < kBLoads; ++i) {
      int idx = tid + i * kThreads;
      if (idx >= kBVec) continue;
      int k = idx / (BN / 4), col = (idx % (BN / 4)) * 4;
      *(float4*)(bs + k * BN + col) =
          make_float4(b_next[i][0], b_next[i][1], b_next[i][2], b_next[i][3]);
    }
  };

  float acc[TM][TN];
  NVHCQ_UNROLL
  for (int i = 0; i < TM; ++i) NVHCQ_UNROLL
  for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int k_tiles = (K + BK - 1) / BK;
  fetch(0);
  store(0);
  __syncthreads();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < k_tiles) fetch((kt + 1) * BK);  // in flight during the products below
    const float* as = As + buf * BK * kLdA;
    const float* bs = Bs + buf * BK * BN;
    NVHCQ_UNROLL
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      NVHCQ_UNROLL
      for (int p = 0; p < kPiecesM; ++p) {
        float4 v = *(const float4*)(as + k * kLdA + p * (BM / kPiecesM) + ty * 4);
        a[p * 4 + 0] = v.x;
        a[p * 4 + 1] = v.y;
        a[p * 4 + 2] = v.z;
        a[p * 4 + 3] = v.w;
      }
      NVHCQ_UNROLL
      for (int p = 0; p < kPiecesN; ++p) {
        float4 v = *(const float4*)(bs + k * BN + p * (BN / kPiecesN) + tx * 4);
        b[p * 4 + 0] = v.x;
        b[p * 4 + 1] = v.y;
        b[p * 4 + 2] = v.z;
        b[p * 4 + 3] = v.w;
      }
      NVHCQ_UNROLL
      for (int i = 0; i < TM; ++i) NVHCQ_UNROLL
      for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    // The other buffer was last read in iteration kt-1, before that iteration's barrier.
    if (kt + 1 < k_tiles) store(buf ^ 1);
    __syncthreads();
  }

  NVHCQ_UNROLL
  for (int i = 0; i < TM; ++i) {
    int row = m0 + (i / 4) * (BM / kPiecesM) + ty * 4 + i % 4;
    if (row >= M) continue;
    NVHCQ_UNROLL
    for (int p = 0; p < kPiecesN; ++p) {
      int col = n0 + p * (BN / kPiecesN) + tx * 4;
      float* dst = C + (uint64_t)row * N + col;
      if constexpr (kVec4) {
        if (col < N)
          *(float4*)dst =
              make_float4(acc[i][p * 4], acc[i][p * 4 + 1], acc[i][p * 4 + 2], acc[i][p * 4 + 3]);
      } else {
        NVHCQ_UNROLL
        for (int e = 0; e < 4; ++e) {
          if (col + e < N) dst[e] = acc[i][p * 4 + e];
        }
      }
    }
  }
}

}  // namespace gemm_f32

// Shared memory: 2 * 8 * ((BM + 4) + BN) floats (the launch's dynamic size).
#define NVHCQ_GEMM_F32(name, BM, BN, TM, TN, vec4, min_blocks)              \
  extern "C" __global__ void __launch_bounds__(256, min_blocks)             \
      name(float* C, const float* A, const float* B, int M, int N, int K) { \
    gemm_f32::gemm<BM, BN, TM, TN, vec4>(C, A, B, M, N, K);                 \
  }

NVHCQ_GEMM_F32(gemm_f32_128x128, 128, 128, 8, 8, true, 2)
NVHCQ_GEMM_F32(gemm_f32_128x128_scalar, 128, 128, 8, 8, false, 2)
NVHCQ_GEMM_F32(gemm_f32_64x64, 64, 64, 4, 4, true, 3)
NVHCQ_GEMM_F32(gemm_f32_64x64_scalar, 64, 64, 4, 4, false, 3)
