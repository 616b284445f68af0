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
#include "gemm_prims.cuh"
#include "llm_jobs.cuh"

#ifndef __CUDACC__
#define __grid_constant__
#endif

#define GW_THREADS 256
#define GW_BM 128
#define GW_BN 64
#define GW_BK 64
#define GW_W_STAGE (GW_BM * GW_BK * 2)
#define GW_X_STAGE (GW_BN * GW_BK * 2)
#define GW_STAGE (GW_W_STAGE + GW_X_STAGE)
#define GW_SMEM (2 * GW_STAGE)

#define GW_STORE 0
#define GW_ADD 1
#define GW_SWIGLU 2

// Byte offset of chunk c (8 elements) of row r of a tile with 64-element rows.
__device__ __forceinline__ uint32_t gw_swizzle(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }

template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float a, float b) {
  return (uint32_t)float_to_bits16<kBf16>(a) | ((uint32_t)float_to_bits16<kBf16>(b) << 16);
}

// Dequantizes a loaded group into 32 values (four 16-byte chunks) of tile row r.
template <bool kBf16>
__device__ __forceinline__ void store_group(uint8_t* tile, int r, int first_chunk, int format, const LlmRawGroup& raw) {
  float v[LLM_GROUP];
  llm_dequant_raw(format, raw, v);
  NVHCQ_UNROLL
  for (int c = 0; c < 4; ++c) {
    uint4 w;
    w.x = pack2<kBf16>(v[8 * c + 0], v[8 * c + 1]);
    w.y = pack2<kBf16>(v[8 * c + 2], v[8 * c + 3]);
    w.z = pack2<kBf16>(v[8 * c + 4], v[8 * c + 5]);
    w.w = pack2<kBf16>(v[8 * c + 6], v[8 * c + 7]);
    *(uint4*)(tile + gw_swizzle(r, first_chunk + c)) = w;
  }
}

template <bool kBf16, int kEpi>
__device__ void gemm_w(const LlmGemmJob& job) {
  uint8_t* smem = dynamic_smem();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const bool swiglu = kEpi == GW_SWIGLU;
  const int tok0 = blockIdx.y * GW_BN;
  const int n_tokens = job.n_tokens;

  // The matrix (segment) of this CTA's rows, and its first row in it.
  int seg = 0, row0 = blockIdx.x * (swiglu ? GW_BM / 2 : GW_BM);
  if (!swiglu) {
    while (seg + 1 < job.segments && row0 >= job.w[seg].rows) row0 -= job.w[seg++].rows;
  }
  const int out_col0 = blockIdx.x * (swiglu ? GW_BM / 2 : GW_BM);  // in the concatenated rows

  // The weight row and the group of each k-tile this thread brings into the
  // tile: tile row tid / 2, group tid % 2 (of GW_BK / 32 = 2).
  const int tile_row = tid / 2, half = tid % 2;
  const bool up_row = swiglu && tile_row >= GW_BM / 2;
  const LlmGpuMatrix m = up_row ? job.w[1] : job.w[seg];
  const int my_row = row0 + (swiglu ? tile_row % (GW_BM / 2) : tile_row);
  const bool row_ok = my_row < m.rows;
  const int K = m.cols;
  // Split-K (add epilogue only): CTA z of gridDim.z takes a contiguous share of
  // the k-tiles and leaves its partial products for add_partials.
  const int k_total = K / GW_BK;
  const int k_first = (int)(((long long)k_total * blockIdx.z) / gridDim.z);
  const int k_tiles = (int)(((long long)k_total * (blockIdx.z + 1)) / gridDim.z) - k_first;
  const int groups = K / LLM_GROUP;
  const bool plain = m.format == kGpuF16 || m.format == kGpuBF16;
  const uint16_t* x = (const uint16_t*)job.x;

  // Activations of k-tile kt into a stage: 64 tokens x 8 chunks, 2 per thread.
  auto load_x = [&](int kt, int stage) {
    uint8_t* xs = smem + stage * GW_STAGE + GW_W_STAGE;
    NVHCQ_UNROLL
    for (int j = 0; j < (GW_BN * 8) / GW_THREADS; ++j) {
      const int id = tid + GW_THREADS * j;
      const int t = id / 8, c = id % 8;
      const bool ok = tok0 + t < n_tokens;
      const uint16_t* src = x + (size_t)(ok ? tok0 + t : 0) * K + (k_first + kt) * GW_BK + c * 8;
      cp_async_16(smem_addr(xs + gw_swizzle(t, c)), src, ok ? 16 : 0);
    }
  };
  // Plain (f16/bf16) weights of k-tile kt: half of this thread's row, 4 chunks.
  auto load_w_plain = [&](int kt, int stage) {
    uint8_t* ws = smem + stage * GW_STAGE;
    const uint16_t* src =
        (const uint16_t*)m.qs + (size_t)(row_ok ? my_row : 0) * K + (k_first + kt) * GW_BK + half * 32;
    NVHCQ_UNROLL
    for (int c = 0; c < 4; ++c) {
      cp_async_16(smem_addr(ws + gw_swizzle(tile_row, half * 4 + c)), src + c * 8, row_ok ? 16 : 0);
    }
  };
  // Quantized weights: one group per k-tile, through registers (a row past the
  // matrix loads zero scales and contributes zeros).
  LlmRawGroup raw{};
  auto load_w_quant = [&](int kt) {
    if (row_ok) raw = llm_load_raw_group(m, (int64_t)my_row * groups + (k_first + kt) * 2 + half);
  };
  auto store_w_quant = [&](int stage) { store_group<kBf16>(smem + stage * GW_STAGE, tile_row, half * 4, m.format, raw); };

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

  if (plain) {
    load_w_plain(0, 0);
  } else {
    load_w_quant(0);
    store_w_quant(0);
  }
  load_x(0, 0);
  cp_async_commit();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt & 1;
    cp_async_wait<0>();
    __syncthreads();  // this stage is complete; every warp is done with the other one
    const bool more = kt + 1 < k_tiles;
    if (more) {
      if (plain) {
        load_w_plain(kt + 1, stage ^ 1);
      } else {
        load_w_quant(kt + 1);
      }
      load_x(kt + 1, stage ^ 1);
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
    if (more && !plain) store_w_quant(stage ^ 1);
  }

  // Epilogue. Accumulator i of (mt, nt) is tile row wm*32 + mt*16 + lane/4 (+8
  // for i >= 2), tile token wn*32 + nt*8 + 2*(lane%4) + (i & 1).
  if (kEpi != GW_SWIGLU) {
    float* y = (float*)job.y;
    const float* bias = (const float*)(seg == 0 ? job.bias[0] : seg == 1 ? job.bias[1] : job.bias[2]);
    const int rows = job.w[seg].rows;
    NVHCQ_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      NVHCQ_UNROLL
      for (int nt = 0; nt < 4; ++nt) {
        NVHCQ_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int r = wm * 32 + mt * 16 + lane / 4 + (i >= 2 ? 8 : 0);
          const int tok = tok0 + wn * 32 + nt * 8 + 2 * (lane % 4) + (i & 1);
          if (row0 + r >= rows || tok >= n_tokens) continue;
          float* out = y + (size_t)tok * job.ldy + out_col0 + r;
          if (kEpi == GW_ADD) {
            if (gridDim.z > 1) {
              ((float*)job.partial)[((size_t)blockIdx.z * n_tokens + tok) * rows + row0 + r] = acc[mt][nt][i];
            } else {
              *out += acc[mt][nt][i];
            }
          } else {
            *out = bias ? acc[mt][nt][i] + bias[row0 + r] : acc[mt][nt][i];
          }
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
    uint16_t* y = (uint16_t*)job.y;
    const int rows = job.w[0].rows;
    NVHCQ_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      NVHCQ_UNROLL
      for (int nt = 0; nt < 4; ++nt) {
        NVHCQ_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int r = wm * 32 + mt * 16 + lane / 4 + (i >= 2 ? 8 : 0);
          const int t = wn * 32 + nt * 8 + 2 * (lane % 4) + (i & 1);
          if (row0 + r >= rows || tok0 + t >= n_tokens) continue;
          const float g = acc[mt][nt][i];
          const float h = g / (1.0f + expf(-g)) * up[r * GW_BN + t];
          y[(size_t)(tok0 + t) * job.ldy + row0 + r] = float_to_bits16<kBf16>(h);
        }
      }
    }
  }
}

// y[t][r] += the splits' partial products for (t, r), summed in split order.
extern "C" __global__ void add_partials(float* y, int ldy, const float* partial, int splits, int n_tokens, int rows) {
  const int total = n_tokens * rows;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    float s = 0.0f;
    for (int z = 0; z < splits; ++z) s += partial[(size_t)z * total + i];
    y[(size_t)(i / rows) * ldy + i % rows] += s;
  }
}

#define GEMM_W_KERNEL(name, bf16, epi)                                                             \
  extern "C" __global__ void __launch_bounds__(GW_THREADS, 2) name(const __grid_constant__ LlmGemmJob job) { \
    gemm_w<bf16, epi>(job);                                                                        \
  }

GEMM_W_KERNEL(gemm_w_f16_store, false, GW_STORE)
GEMM_W_KERNEL(gemm_w_f16_add, false, GW_ADD)
GEMM_W_KERNEL(gemm_w_f16_swiglu, false, GW_SWIGLU)
GEMM_W_KERNEL(gemm_w_bf16_store, true, GW_STORE)
GEMM_W_KERNEL(gemm_w_bf16_add, true, GW_ADD)
GEMM_W_KERNEL(gemm_w_bf16_swiglu, true, GW_SWIGLU)
