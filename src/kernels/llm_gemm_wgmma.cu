// Prefill matrix products on Hopper's warpgroup tensor cores (sm_90a): the
// contract of llm_gemm.cu (Y = X . W^T, weights in their GPU layout dequantized
// tile by tile in shared memory; store, add and swiglu epilogues; Q, K and V in
// one launch; split-K partials for add), with larger token tiles and wgmma.
//
// A CTA is two warpgroups. It computes LLM_GEMM_ROWS weight rows x kTokens
// tokens (128 or 256): warpgroup w takes tile rows 64w.. and issues wgmma
// m64nNk16 (N = kTokens), whose operands (a 64 x 16 slice of the weight tile
// and a kTokens x 16 slice of the activation tile, both K-major in 128-byte
// swizzled rows) come from shared memory through descriptors; the 64 x kTokens
// f32 accumulator is kTokens / 2 registers per thread. K advances through a
// ring of slots, copies running `ahead` k-tiles in front of the products:
//   iteration kt: wait for tile kt's copies; fence them (and the dequantized
//   weights the threads wrote) into the async proxy; barrier; copy tile
//   kt+ahead into the slot of tile kt+ahead-slots, whose products are done;
//   load the raw weight groups of tile kt+1; issue tile kt's four wgmma;
//   dequantize tile kt+1's weights into its slot while they run; wait until at
//   most kInFlight batches (tile kt's, when 1) are still running.
// 128 tokens: 3 slots of 32 KiB, two CTAs per SM, each waiting for its own
// batch (the other CTA keeps the tensor cores busy). 256 tokens: 4 slots of
// 48 KiB, one CTA per SM, one batch left running across the barrier.
//
// Only gemm_prims.cuh / wgmma_prims.cuh primitives and plain loads are used, so
// tests/kernels/ runs this file on the CPU warp emulator.
#include "llm_gemm_tiles.cuh"
#include "wgmma_prims.cuh"

#ifndef __CUDACC__
#define __grid_constant__
#endif

// Per token tile: the ring's slots and batches left running (the CTAs per SM
// are the kernels' launch bounds). The launch's dynamic shared memory is
// GwwTile<tokens>::kSmem: the ring and room to align it to 1 KiB (the swizzle
// is a function of address bits 4-9); gpu_llama_plan.cpp matches it.
#define GWW_W_BYTES (LLM_GEMM_ROWS * LLM_GEMM_K * 2)  // 16 KiB
// (Enumerators rather than static constexpr members: NVRTC gives those device
// storage, which a CUBIN would then relocate against.)
template <int kTokens>
struct GwwTile {
  enum : int {
    kSlots = kTokens == 256 ? 4 : 3,
    kInFlight = kTokens == 256 ? 1 : 0,
    kAhead = kSlots - 1 - kInFlight,  // k-tiles copied ahead
    kSlotBytes = GWW_W_BYTES + kTokens * LLM_GEMM_K * 2,
    kSmem = kSlots * kSlotBytes + 1024,
  };
};

template <bool kBf16, int kTokens>
__device__ __forceinline__ void gww_mma(float (&acc)[kTokens / 2], uint64_t da, uint64_t db) {
  if constexpr (kTokens == 256) {
    wgmma_m64n256k16<kBf16, true>(acc, da, db);
  } else {
    wgmma_m64n128k16<kBf16, true>(acc, da, db);
  }
}

// The tile of this CTA: the grid's, or under a tail split (LlmGemmJob::
// tail_pairs) tile i of the row of CTAs, or a half of one of the last tiles.
template <int kTokens>
__device__ __forceinline__ GwTile gww_tile(const LlmGemmJob& job) {
  if (job.tail_pairs == 0) return gw_grid_tile();
  const int tiles_x = (job.n_tokens + kTokens - 1) / kTokens;
  const int whole = (int)gridDim.x - 2 * job.tail_pairs;
  const int i = blockIdx.x;
  if (i < whole) return GwTile{i % tiles_x, i / tiles_x, 0, 1, -1};
  const int pair = (i - whole) / 2, tile = whole + pair;
  return GwTile{tile % tiles_x, tile / tiles_x, (i - whole) % 2, 2, pair};
}

// A tail half's accumulators: left in tail_partial (thread-major); the second
// half of the pair to get here adds the other's and returns true (it runs the
// epilogue), the first returns false. The sum is first half + second half
// whichever finishes first (float addition commutes), so results do not
// depend on timing.
template <int kTokens>
__device__ __forceinline__ bool gww_join_halves(const LlmGemmJob& job, const GwTile& t, float (&acc)[kTokens / 2]) {
  __shared__ int second;
  auto slot = [&](int half) {
    return (float*)job.tail_partial + ((size_t)(2 * t.pair + half) * LLM_GEMM_THREADS + threadIdx.x) * (kTokens / 2);
  };
  float4* mine = (float4*)slot(t.z);
  NVHCQ_UNROLL
  for (int i = 0; i < kTokens / 8; ++i) mine[i] = make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* count = (unsigned*)job.tail_counts + t.pair;
    __threadfence();
    second = atomicAdd(count, 1u) == 1u;
    if (second) {
      *count = 0;  // for the next launch
      __threadfence();
    }
  }
  __syncthreads();
  if (!second) return false;
  const float4* other = (const float4*)slot(1 - t.z);
  NVHCQ_UNROLL
  for (int i = 0; i < kTokens / 8; ++i) {
    const float4 o = __ldcg(other + i);
    acc[4 * i] += o.x;
    acc[4 * i + 1] += o.y;
    acc[4 * i + 2] += o.z;
    acc[4 * i + 3] += o.w;
  }
  return true;
}

// The epilogue, through shared memory: the accumulators go to the ring (free
// once every warp is past the main loop) as [token][row] f32, then each warp
// takes whole tokens and writes a token's rows with consecutive lanes (128
// coalesced bytes a store instead of eight rows x four tokens). The loop over
// tokens stays rolled: unrolled stores of every register with their bounds
// tests were half of a 256-token swiglu kernel's 148 KB of code.
template <bool kBf16, int kEpi, int kTokens>
__device__ __forceinline__ void gww_epilogue(const LlmGemmJob& job, const GwRows& g, int tok0,
                                             const float (&acc)[kTokens / 2], uint8_t* smem) {
  // +4 words a token: the eight rows x four token pairs of one store fall on
  // 32 different banks.
  constexpr int kStride = LLM_GEMM_ROWS + 4;
  static_assert(kTokens * kStride * 4 <= GwwTile<kTokens>::kSlots * GwwTile<kTokens>::kSlotBytes,
                "the staged accumulators fit the ring");
  float* stage = (float*)smem;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  // Accumulator acc[4j + i]: tile row 64 * warpgroup + 16 * (warp % 4) +
  // lane / 4 (+8 for i >= 2), tile token 8j + 2 * (lane % 4) + (i & 1).
  const int row_base = (tid / 128) * 64 + (warp % 4) * 16 + lane / 4;
  __syncthreads();
  NVHCQ_UNROLL
  for (int j = 0; j < kTokens / 8; ++j) {
    NVHCQ_UNROLL
    for (int i = 0; i < 4; ++i) {
      stage[(8 * j + 2 * (lane % 4) + (i & 1)) * kStride + row_base + (i >= 2 ? 8 : 0)] = acc[4 * j + i];
    }
  }
  __syncthreads();
  const int warps = LLM_GEMM_THREADS / 32;
  if (kEpi != GW_SWIGLU) {
    const GwOut o = gw_out(job, g);
    NVHCQ_NO_UNROLL
    for (int t = warp; t < kTokens && tok0 + t < o.n_tokens; t += warps) {
      NVHCQ_UNROLL
      for (int q = 0; q < LLM_GEMM_ROWS / 32; ++q) {
        gw_emit<kEpi>(o, lane + 32 * q, tok0 + t, stage[t * kStride + lane + 32 * q]);
      }
    }
    return;
  }
  // swiglu: the gate's rows are tile rows 0-63, up's the same rows at 64-127.
  NVHCQ_NO_UNROLL
  for (int t = warp; t < kTokens && tok0 + t < job.n_tokens; t += warps) {
    NVHCQ_UNROLL
    for (int q = 0; q < LLM_GEMM_ROWS / 64; ++q) {
      const int r = lane + 32 * q;
      const float* token_row = stage + t * kStride;
      gw_emit_swiglu<kBf16>(job, g.row0, r, tok0 + t, token_row[r], token_row[LLM_GEMM_ROWS / 2 + r]);
    }
  }
}

template <bool kBf16, int kEpi, int kTokens>
__device__ void gemm_wg(const LlmGemmJob& job) {
  using T = GwwTile<kTokens>;
  const int tid = threadIdx.x, wg = tid / 128;
  uint8_t* base = dynamic_smem();
  uint8_t* smem = base + (((smem_addr(base) + 1023u) & ~1023u) - smem_addr(base));
  // The tail split serves store and swiglu products only: compiled into the
  // add kernels, it made them 10-25% slower (8B F16 Wo and down in prefill).
  constexpr bool kTail = kEpi != GW_ADD;
  const GwTile tile = kTail ? gww_tile<kTokens>(job) : gw_grid_tile();
  const int tok0 = tile.x * kTokens;
  const GwRows g = gw_rows<kEpi == GW_SWIGLU>(job, tid, tile);

  auto w_tile = [&](int kt) { return smem + (kt % T::kSlots) * T::kSlotBytes; };
  auto load_async = [&](int kt) {
    if (g.plain) gw_load_w_plain(w_tile(kt), g, kt);
    gw_load_x<kTokens>(w_tile(kt) + GWW_W_BYTES, job, g, tok0, kt, tid);
  };
  LlmRawGroup raw{};
  auto store_w_quant = [&](int kt) { store_group<kBf16>(w_tile(kt), g.tile_row, g.half * 4, g.m.format, raw); };

  float acc[kTokens / 2];
  NVHCQ_UNROLL
  for (int i = 0; i < kTokens / 2; ++i) acc[i] = 0.0f;

  if (!g.plain && g.k_tiles > 0) {
    gw_load_w_quant(raw, g, 0);
    store_w_quant(0);
  }
  NVHCQ_UNROLL
  for (int s = 0; s < T::kAhead; ++s) {
    if (s < g.k_tiles) load_async(s);
    cp_async_commit();
  }
  for (int kt = 0; kt < g.k_tiles; ++kt) {
    // Committed groups: kAhead+kt; the oldest kt+1 (tile kt's) are done.
    cp_async_wait<T::kAhead - 1>();
    fence_proxy_async();
    __syncthreads();
    // Tile kt+kAhead's slot held tile kt-1-kInFlight, whose batch is done.
    if (kt + T::kAhead < g.k_tiles) load_async(kt + T::kAhead);
    cp_async_commit();
    const bool more = kt + 1 < g.k_tiles;
    if (!g.plain && more) gw_load_w_quant(raw, g, kt + 1);

    const uint32_t w_addr = smem_addr(w_tile(kt));
    const uint32_t x_addr = w_addr + GWW_W_BYTES;
    wgmma_fence_operands(acc);
    wgmma_fence();
    NVHCQ_UNROLL
    for (int kk = 0; kk < LLM_GEMM_K / 16; ++kk) {
      // 16 k-values are 32 bytes into each 128-byte row; 8-row atoms are 1 KiB apart.
      const uint64_t da = wgmma_smem_desc(w_addr + wg * 64 * 128 + kk * 32, 16, 1024);
      const uint64_t db = wgmma_smem_desc(x_addr + kk * 32, 16, 1024);
      gww_mma<kBf16, kTokens>(acc, da, db);
    }
    wgmma_commit();
    // Tile kt+1's slot held tile kt+1-kSlots, at most tile kt-1-kInFlight: done.
    if (!g.plain && more) store_w_quant(kt + 1);
    wgmma_wait<T::kInFlight>();
    wgmma_fence_operands(acc);
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  cp_async_wait<0>();
  if constexpr (kTail) {
    if (tile.pair >= 0 && !gww_join_halves<kTokens>(job, tile, acc)) return;
  }

  gww_epilogue<kBf16, kEpi, kTokens>(job, g, tok0, acc, smem);
}

#define GEMM_WG_KERNEL(name, bf16, epi, tokens)                                                  \
  extern "C" __global__ void __launch_bounds__(LLM_GEMM_THREADS, tokens == 256 ? 1 : 2)           \
      name(const __grid_constant__ LlmGemmJob job) {                                               \
    gemm_wg<bf16, epi, tokens>(job);                                                               \
  }
#define GEMM_WG_KERNELS(tokens)                                                 \
  GEMM_WG_KERNEL(gemm_wg##tokens##_f16_store, false, GW_STORE, tokens)          \
  GEMM_WG_KERNEL(gemm_wg##tokens##_f16_add, false, GW_ADD, tokens)              \
  GEMM_WG_KERNEL(gemm_wg##tokens##_f16_swiglu, false, GW_SWIGLU, tokens)        \
  GEMM_WG_KERNEL(gemm_wg##tokens##_bf16_store, true, GW_STORE, tokens)          \
  GEMM_WG_KERNEL(gemm_wg##tokens##_bf16_add, true, GW_ADD, tokens)              \
  GEMM_WG_KERNEL(gemm_wg##tokens##_bf16_swiglu, true, GW_SWIGLU, tokens)

GEMM_WG_KERNELS(128)
GEMM_WG_KERNELS(256)
