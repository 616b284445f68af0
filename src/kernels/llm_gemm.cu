// Prefill matrix products on the tensor cores: Y = X . W^T for a batch of
// token activations X (f16, or bf16 for BF16 weights) and a weight matrix in its
// GPU layout (llm_formats.cuh), dequantized to f16/bf16 tile by tile in shared
// memory, never to global memory. f32 accumulation (mma.sync m16n8k16).
//
// A CTA computes GW_BM weight rows x GW_BN tokens (swiglu: GW_BM / 2 rows of the
// gate and the same rows of up) with 8 warps of 32 x 32. K advances GW_BK at a
// time through two shared-memory stages: the activations arrive by cp.async,
// the weights through registers (each thread loads one group of a row, then
// dequantizes it into the other stage while the tensor cores work on this one).
// Tiles have 128-byte rows whose 16-byte chunks are XOR-swizzled by row so that
// ldmatrix reads them without bank conflicts. Several matrices sharing the input
// (Q, K, V) are one launch: a CTA's rows fall in one of them.
//
// Only gemm_prims.cuh primitives and plain loads are used, so tests/kernels/
// runs this file on the CPU warp emulator.
#include "llm_gemm_tiles.cuh"

#ifndef __CUDACC__
#define __grid_constant__
#endif

#define GW_BM LLM_GEMM_ROWS
#define GW_BN 64
#define GW_BK LLM_GEMM_K
#define GW_W_STAGE (GW_BM * GW_BK * 2)
#define GW_X_STAGE (GW_BN * GW_BK * 2)
#define GW_STAGE (GW_W_STAGE + GW_X_STAGE)
#define GW_SMEM (2 * GW_STAGE)

template <bool kBf16, int kEpi>
__device__ void gemm_w(const LlmGemmJob& job) {
  uint8_t* smem = dynamic_smem();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int tok0 = blockIdx.x * GW_BN;
  const GwRows g = gw_rows<kEpi == GW_SWIGLU>(job, tid, gw_grid_tile());

  auto load_async = [&](int kt, int stage) {
    if (g.plain) gw_load_w_plain(smem + stage * GW_STAGE, g, kt);
    gw_load_x<GW_BN>(smem + stage * GW_STAGE + GW_W_STAGE, job, g, tok0, kt, tid);
  };
  LlmRawGroup raw{};
  auto store_w_quant = [&](int stage) { store_group<kBf16>(smem + stage * GW_STAGE, g.tile_row, g.half * 4, g.m.format, raw); };

  float acc[2][4][4];
  NVHCQ_UNROLL
  for (int a = 0; a < 2; ++a) {
    NVHCQ_UNROLL
    for (int b = 0; b < 4; ++b) {
      NVHCQ_UNROLL
      for (int c = 0; c < 4; ++c) acc[a][b][c] = 0.0f;
    }
  }
  const int wm = warp / 2, wn = warp % 2;  // warp tile: rows wm*32.., tokens wn*32..

  if (!g.plain) {
    gw_load_w_quant(raw, g, 0);
    store_w_quant(0);
  }
  load_async(0, 0);
  cp_async_commit();

  for (int kt = 0; kt < g.k_tiles; ++kt) {
    const int stage = kt & 1;
    cp_async_wait<0>();
    __syncthreads();  // this stage is complete; every warp is done with the other one
    const bool more = kt + 1 < g.k_tiles;
    if (more) {
      if (!g.plain) gw_load_w_quant(raw, g, kt + 1);
      load_async(kt + 1, stage ^ 1);
    }
    cp_async_commit();

    const uint8_t* ws = smem + stage * GW_STAGE;
    const uint8_t* xs = ws + GW_W_STAGE;
    NVHCQ_UNROLL
    for (int ks = 0; ks < GW_BK / 16; ++ks) {
      uint32_t a[2][4], b[4][2];
      NVHCQ_UNROLL
      for (int mt = 0; mt < 2; ++mt) {
        const int r = wm * 32 + mt * 16 + lane % 16;
        ldmatrix_x4(a[mt], smem_addr(ws + gw_swizzle(r, ks * 2 + lane / 16)));
      }
      NVHCQ_UNROLL
      for (int np = 0; np < 2; ++np) {
        uint32_t t[4];
        const int tok = wn * 32 + np * 16 + (lane / 16) * 8 + lane % 8;
        ldmatrix_x4(t, smem_addr(xs + gw_swizzle(tok, ks * 2 + (lane / 8) % 2)));
        b[2 * np][0] = t[0];
        b[2 * np][1] = t[1];
        b[2 * np + 1][0] = t[2];
        b[2 * np + 1][1] = t[3];
      }
      NVHCQ_UNROLL
      for (int mt = 0; mt < 2; ++mt) {
        NVHCQ_UNROLL
        for (int nt = 0; nt < 4; ++nt) mma_m16n8k16<kBf16>(acc[mt][nt], a[mt], b[nt]);
      }
    }
    if (more && !g.plain) store_w_quant(stage ^ 1);
  }

  // Epilogue. Accumulator i of (mt, nt) is tile row wm*32 + mt*16 + lane/4 (+8
  // for i >= 2), tile token wn*32 + nt*8 + 2*(lane%4) + (i & 1).
  if (kEpi != GW_SWIGLU) {
    const GwOut o = gw_out(job, g);
    NVHCQ_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      NVHCQ_UNROLL
      for (int nt = 0; nt < 4; ++nt) {
        NVHCQ_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int r = wm * 32 + mt * 16 + lane / 4 + (i >= 2 ? 8 : 0);
          gw_emit<kEpi>(o, r, tok0 + wn * 32 + nt * 8 + 2 * (lane % 4) + (i & 1), acc[mt][nt][i]);
        }
      }
    }
    return;
  }
  // swiglu: warps 4-7 (up rows) hand their products to warps 0-3 (gate rows)
  // through shared memory, [64 rows][GW_BN tokens] f32.
  __syncthreads();
  float* up = (float*)smem;
  if (wm >= 2) {
    NVHCQ_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      NVHCQ_UNROLL
      for (int nt = 0; nt < 4; ++nt) {
        NVHCQ_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int r = (wm - 2) * 32 + mt * 16 + lane / 4 + (i >= 2 ? 8 : 0);
          const int t = wn * 32 + nt * 8 + 2 * (lane % 4) + (i & 1);
          up[r * GW_BN + t] = acc[mt][nt][i];
        }
      }
    }
  }
  __syncthreads();
  if (wm < 2) {
    NVHCQ_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      NVHCQ_UNROLL
      for (int nt = 0; nt < 4; ++nt) {
        NVHCQ_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int r = wm * 32 + mt * 16 + lane / 4 + (i >= 2 ? 8 : 0);
          const int t = wn * 32 + nt * 8 + 2 * (lane % 4) + (i & 1);
          gw_emit_swiglu<kBf16>(job, g.row0, r, tok0 + t, acc[mt][nt][i], up[r * GW_BN + t]);
        }
      }
    }
  }
}

// y[t][r] += the splits' partial products for (t, r), summed in split order.
extern "C" __global__ void add_partials(float* y, int ldy, const float* partial, int splits, int n_tokens, int rows) {
  const int total = n_tokens * rows;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    y[(size_t)(i / rows) * ldy + i % rows] += llm_sum_splits(partial + i, (size_t)total, splits);
  }
}

#define GEMM_W_KERNEL(name, bf16, epi)                                                             \
  extern "C" __global__ void __launch_bounds__(LLM_GEMM_THREADS, 2) name(const __grid_constant__ LlmGemmJob job) { \
    gemm_w<bf16, epi>(job);                                                                        \
  }

GEMM_W_KERNEL(gemm_w_f16_store, false, GW_STORE)
GEMM_W_KERNEL(gemm_w_f16_add, false, GW_ADD)
GEMM_W_KERNEL(gemm_w_f16_swiglu, false, GW_SWIGLU)
GEMM_W_KERNEL(gemm_w_bf16_store, true, GW_STORE)
GEMM_W_KERNEL(gemm_w_bf16_add, true, GW_ADD)
GEMM_W_KERNEL(gemm_w_bf16_swiglu, true, GW_SWIGLU)
