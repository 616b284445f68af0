// What the two prefill product kernels share (llm_gemm.cu on mma.sync,
// llm_gemm_wgmma.cu on Hopper's wgmma): a CTA of 256 threads computes
// LLM_GEMM_ROWS weight rows of Y = X . W^T for a tile of tokens, K advancing
// LLM_GEMM_K at a time. Weight and activation tiles have 128-byte rows (64
// 16-bit values) whose 16-byte chunks are XOR-swizzled by row: conflict-free
// for ldmatrix, and exactly the 128-byte swizzle a wgmma K-major descriptor
// names when a tile starts on a 1 KiB boundary.
//
// Each thread brings one 32-value group of one weight row into every k-tile:
// tile row tid / 2, group tid % 2. A swiglu CTA holds LLM_GEMM_ROWS / 2 rows of
// the gate in its upper tile rows and the same rows of up in its lower ones.
#pragma once

#include "gemm_prims.cuh"
#include "llm_jobs.cuh"

#define LLM_GEMM_THREADS 256
#define LLM_GEMM_ROWS 128
#define LLM_GEMM_K 64

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

// The tile a CTA computes: token tile x, row tile y, and share z of `shares`
// of the k-tiles. The grid's own coordinates (x token tiles, y row tiles, z
// split-K shares of an add product) but for the tail split of store and
// swiglu products in llm_gemm_wgmma.cu (the two shares of tail pair `pair`
// are halves of a tile, summed before the epilogue).
struct GwTile {
  int x, y, z, shares;
  int pair;  // the tail pair of a half tile, or -1
};

__device__ __forceinline__ GwTile gw_grid_tile() {
  return GwTile{(int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z, (int)gridDim.z, -1};
}

// The rows of a CTA and the one row this thread loads.
struct GwRows {
  int seg;       // the matrix (segment) of the CTA's rows
  int row0;      // the CTA's first row in it
  int out_col0;  // the CTA's first output column among the concatenated rows
  LlmGpuMatrix m;  // the matrix this thread loads from (swiglu: gate or up)
  int tile_row, half;
  int my_row;  // its row in m
  bool row_ok;
  int k_first, k_tiles;  // this CTA's k-tiles (its share of them)
  bool plain;            // f16/bf16 weights (copied as they are)
};

template <bool kSwiglu>
__device__ __forceinline__ GwRows gw_rows(const LlmGemmJob& job, int tid, const GwTile& tile) {
  GwRows g;
  g.seg = 0;
  g.row0 = tile.y * (kSwiglu ? LLM_GEMM_ROWS / 2 : LLM_GEMM_ROWS);
  if (!kSwiglu) {
    while (g.seg + 1 < job.segments && g.row0 >= job.w[g.seg].rows) g.row0 -= job.w[g.seg++].rows;
  }
  g.out_col0 = tile.y * (kSwiglu ? LLM_GEMM_ROWS / 2 : LLM_GEMM_ROWS);
  g.tile_row = tid / 2;
  g.half = tid % 2;
  const bool up_row = kSwiglu && g.tile_row >= LLM_GEMM_ROWS / 2;
  g.m = up_row ? job.w[1] : job.w[g.seg];
  g.my_row = g.row0 + (kSwiglu ? g.tile_row % (LLM_GEMM_ROWS / 2) : g.tile_row);
  g.row_ok = g.my_row < g.m.rows;
  // Split-K (add epilogue, or a tail half): share z takes a contiguous part of
  // the k-tiles.
  const int k_total = g.m.cols / LLM_GEMM_K;
  g.k_first = (int)(((long long)k_total * tile.z) / tile.shares);
  g.k_tiles = (int)(((long long)k_total * (tile.z + 1)) / tile.shares) - g.k_first;
  g.plain = llm_format_16bit(g.m.format);
  return g;
}

// Activations of k-tile kt for kTokens tokens from tok0 into a tile (kTokens
// rows of 8 chunks) by cp.async; tokens past n_tokens read as zeros.
template <int kTokens>
__device__ __forceinline__ void gw_load_x(uint8_t* tile, const LlmGemmJob& job, const GwRows& g, int tok0, int kt,
                                          int tid) {
  const uint16_t* x = (const uint16_t*)job.x;
  const int K = g.m.cols;
  NVHCQ_UNROLL
  for (int j = 0; j < (kTokens * 8) / LLM_GEMM_THREADS; ++j) {
    const int id = tid + LLM_GEMM_THREADS * j;
    const int t = id / 8, c = id % 8;
    const bool ok = tok0 + t < job.n_tokens;
    const uint16_t* src = x + (size_t)(ok ? tok0 + t : 0) * K + (g.k_first + kt) * LLM_GEMM_K + c * 8;
    cp_async_16(smem_addr(tile + gw_swizzle(t, c)), src, ok ? 16 : 0);
  }
}

// Plain (f16/bf16) weights of k-tile kt: this thread's half row, 4 chunks, by cp.async.
__device__ __forceinline__ void gw_load_w_plain(uint8_t* tile, const GwRows& g, int kt) {
  const int K = g.m.cols;
  const uint16_t* src =
      (const uint16_t*)g.m.qs + (size_t)(g.row_ok ? g.my_row : 0) * K + (g.k_first + kt) * LLM_GEMM_K + g.half * 32;
  NVHCQ_UNROLL
  for (int c = 0; c < 4; ++c) {
    cp_async_16(smem_addr(tile + gw_swizzle(g.tile_row, g.half * 4 + c)), src + c * 8, g.row_ok ? 16 : 0);
  }
}

// Quantized weights of k-tile kt: this thread's group, into registers (a row
// past the matrix keeps zero scales and contributes zeros).
__device__ __forceinline__ void gw_load_w_quant(LlmRawGroup& raw, const GwRows& g, int kt) {
  if (g.row_ok) raw = llm_load_raw_group(g.m, (int64_t)g.my_row * (g.m.cols / LLM_GROUP) + (g.k_first + kt) * 2 + g.half);
}

// The output of a store/add CTA: where product (tile row r, token tok) goes.
struct GwOut {
  float* y;
  const float* bias;
  float* partial;
  int rows;  // of the CTA's segment
  int ldy, n_tokens, row0, out_col0;
  bool split;
};

__device__ __forceinline__ GwOut gw_out(const LlmGemmJob& job, const GwRows& g) {
  GwOut o;
  o.y = (float*)job.y;
  o.bias = (const float*)(g.seg == 0 ? job.bias[0] : g.seg == 1 ? job.bias[1] : job.bias[2]);
  o.partial = (float*)job.partial;
  o.rows = job.w[g.seg].rows;
  o.ldy = job.ldy;
  o.n_tokens = job.n_tokens;
  o.row0 = g.row0;
  o.out_col0 = g.out_col0;
  o.split = gridDim.z > 1;  // (the tail split takes no add products)
  return o;
}

template <int kEpi>
__device__ __forceinline__ void gw_emit(const GwOut& o, int r, int tok, float v) {
  if (o.row0 + r >= o.rows || tok >= o.n_tokens) return;
  float* out = o.y + (size_t)tok * o.ldy + o.out_col0 + r;
  if (kEpi == GW_ADD) {
    if (o.split) {
      o.partial[((size_t)blockIdx.z * o.n_tokens + tok) * o.rows + o.row0 + r] = v;
    } else {
      *out += v;
    }
  } else {
    *out = o.bias ? v + o.bias[o.row0 + r] : v;
  }
}

// swiglu output h = silu(gate) * up for row r (of the gate's rows from row0), token tok.
template <bool kBf16>
__device__ __forceinline__ void gw_emit_swiglu(const LlmGemmJob& job, int row0, int r, int tok, float gate, float up) {
  if (row0 + r >= job.w[0].rows || tok >= job.n_tokens) return;
  const float h = llm_silu_times(gate, up);
  ((uint16_t*)job.y)[(size_t)tok * job.ldy + row0 + r] = float_to_bits16<kBf16>(h);
}
