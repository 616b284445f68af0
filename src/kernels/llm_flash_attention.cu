// Prefill attention on the tensor cores (flash-attention style): a block of
// four warps takes 64 consecutive query tokens of one query head; each warp holds
// 16 of them as mma fragments (rotated by RoPE on the way in) and walks the
// causal keys in tiles of 64 staged in shared memory by cp.async: S = Q K^T
// (mma), an online softmax on the S fragments, O += P V (mma, P reused in
// registers as the A operand). Keys and values come from the f16 KV cache, which
// rope_kv_store (llm_attention.cu) filled for the batch first.
//
// Only gemm_prims.cuh primitives, warp shuffles and plain loads are used, so
// tests/kernels/ runs this file on the CPU warp emulator.
#include "gemm_prims.cuh"
#include "llm_jobs.cuh"

#ifndef __CUDACC__
#define __grid_constant__
#endif

#define FA_THREADS 128
#define FA_BQ 64  // query tokens per block
#define FA_BK 64  // keys per tile

// Byte offset of 16-byte chunk c of row r in a tile with `row_bytes`-byte rows:
// the chunk index is XORed with the row so that ldmatrix's eight rows of one
// chunk fall in eight bank groups.
__device__ __forceinline__ uint32_t fa_swizzle(int r, int c, int row_bytes) {
  return r * row_bytes + ((c ^ (r & 7)) << 4);
}

__device__ __forceinline__ uint32_t fa_pack_half2(float lo, float hi) {
  return (uint32_t)float_to_half(lo) | ((uint32_t)float_to_half(hi) << 16);
}

// Element `col` of query token `token`, rotated by RoPE as the CPU rotates it.
__device__ __forceinline__ float fa_query(const LlmAttentionJob& job, const float* q, const float2* cs, int col) {
  if (col >= job.n_rot) return q[col];
  const int half = job.n_rot / 2;
  int first, second, pair;
  if (job.neox) {
    pair = col % half;
    first = pair;
    second = pair + half;
  } else {
    pair = col / 2;
    first = col & ~1;
    second = col | 1;
  }
  const float a = q[first], b = q[second];
  const float2 r = cs[pair];
  return col == first ? llm_sub(llm_mul(a, r.x), llm_mul(b, r.y)) : llm_add(llm_mul(a, r.y), llm_mul(b, r.x));
}

template <int HD>
__device__ void flash_prefill(const LlmAttentionJob& job) {
  constexpr int kRowBytes = HD * 2;
  constexpr int kChunks = HD / 8;  // 16-byte chunks per row
  constexpr int KS = HD / 16;      // k-steps of Q K^T
  uint8_t* smem = dynamic_smem();
  uint8_t* k_tile = smem;
  uint8_t* v_tile = smem + FA_BK * kRowBytes;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int head = blockIdx.y;
  const int n_tokens = job.n_tokens;
  const int n_gqa = job.n_head / job.n_kv;
  const int kvh = head / n_gqa;
  const int pos0 = ((const LlmStepState*)job.state)->pos;
  const int q_first = blockIdx.x * FA_BQ + warp * 16;  // this warp's first query token
  const int r0 = lane / 4, c0 = 2 * (lane % 4);

  // Q fragments, rotated, in f16.
  uint32_t qa[KS][4];
  NVHCQ_UNROLL
  for (int ks = 0; ks < KS; ++ks) {
    NVHCQ_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int token = q_first + r0 + (i & 1) * 8;
      const int col = ks * 16 + c0 + (i >> 1) * 8;
      float x0 = 0.0f, x1 = 0.0f;
      if (token < n_tokens) {
        const float* q = (const float*)job.qkv + (size_t)token * job.qkv_stride + (size_t)head * HD;
        const float2* cs = (const float2*)job.rope + (size_t)(pos0 + token) * (job.n_rot / 2);
        x0 = fa_query(job, q, cs, col);
        x1 = fa_query(job, q, cs, col + 1);
      }
      qa[ks][i] = fa_pack_half2(x0, x1);
    }
  }

  float o[HD / 8][4];
  NVHCQ_UNROLL
  for (int d = 0; d < HD / 8; ++d) {
    NVHCQ_UNROLL
    for (int i = 0; i < 4; ++i) o[d][i] = 0.0f;
  }
  const float neg_inf = -__uint_as_float(0x7f800000u);
  float row_max[2] = {neg_inf, neg_inf}, row_sum[2] = {0.0f, 0.0f};
  const float scale = job.scale * 1.4426950408889634f;  // softmax in base 2

  const size_t head_base = (size_t)kvh * job.capacity * HD;
  const uint16_t* k_cache = (const uint16_t*)job.k_cache + head_base;
  const uint16_t* v_cache = (const uint16_t*)job.v_cache + head_base;
  const int block_end = (int)(blockIdx.x + 1) * FA_BQ;
  const int block_last = (n_tokens < block_end ? n_tokens : block_end) - 1;
  const int key_end = pos0 + block_last + 1;  // keys [0, key_end) matter to this block

  for (int kb = 0; kb < key_end; kb += FA_BK) {
    __syncthreads();  // every warp is done with the previous tile
    for (int id = threadIdx.x; id < FA_BK * kChunks; id += FA_THREADS) {
      const int r = id / kChunks, c = id % kChunks;
      const bool ok = kb + r < key_end;
      const size_t at = (size_t)(ok ? kb + r : 0) * HD + c * 8;
      cp_async_16(smem_addr(k_tile + fa_swizzle(r, c, kRowBytes)), k_cache + at, ok ? 16 : 0);
      cp_async_16(smem_addr(v_tile + fa_swizzle(r, c, kRowBytes)), v_cache + at, ok ? 16 : 0);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();

    // S = Q K^T: this warp's 16 queries x 64 keys.
    float s[8][4];
    NVHCQ_UNROLL
    for (int j = 0; j < 8; ++j) {
      NVHCQ_UNROLL
      for (int i = 0; i < 4; ++i) s[j][i] = 0.0f;
    }
    NVHCQ_UNROLL
    for (int ks = 0; ks < KS; ++ks) {
      NVHCQ_UNROLL
      for (int np = 0; np < 4; ++np) {
        uint32_t t[4];
        const int key = np * 16 + (lane / 16) * 8 + lane % 8;
        ldmatrix_x4(t, smem_addr(k_tile + fa_swizzle(key, ks * 2 + (lane / 8) % 2, kRowBytes)));
        const uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
        mma_m16n8k16<false>(s[2 * np], qa[ks], b0);
        mma_m16n8k16<false>(s[2 * np + 1], qa[ks], b1);
      }
    }
    // Causal mask, scale, and the online softmax of the two rows this thread holds.
    NVHCQ_UNROLL
    for (int rr = 0; rr < 2; ++rr) {
      const int qpos = pos0 + q_first + r0 + rr * 8;
      float mx = neg_inf;
      NVHCQ_UNROLL
      for (int j = 0; j < 8; ++j) {
        NVHCQ_UNROLL
        for (int e = 0; e < 2; ++e) {
          const int key = kb + j * 8 + c0 + e;
          float& v = s[j][2 * rr + e];
          v = key <= qpos ? v * scale : neg_inf;
          mx = fmaxf(mx, v);
        }
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(row_max[rr], mx);
      const float corr = exp2f(row_max[rr] - m_new);
      float sum = 0.0f;
      NVHCQ_UNROLL
      for (int j = 0; j < 8; ++j) {
        NVHCQ_UNROLL
        for (int e = 0; e < 2; ++e) {
          float& v = s[j][2 * rr + e];
          v = exp2f(v - m_new);
          sum += v;
        }
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      row_sum[rr] = row_sum[rr] * corr + sum;
      row_max[rr] = m_new;
      NVHCQ_UNROLL
      for (int d = 0; d < HD / 8; ++d) {
        o[d][2 * rr] *= corr;
        o[d][2 * rr + 1] *= corr;
      }
    }
    // O += P V: P's accumulators are the A fragments of the product.
    NVHCQ_UNROLL
    for (int t = 0; t < FA_BK / 16; ++t) {
      const uint32_t a[4] = {fa_pack_half2(s[2 * t][0], s[2 * t][1]), fa_pack_half2(s[2 * t][2], s[2 * t][3]),
                             fa_pack_half2(s[2 * t + 1][0], s[2 * t + 1][1]),
                             fa_pack_half2(s[2 * t + 1][2], s[2 * t + 1][3])};
      NVHCQ_UNROLL
      for (int dp = 0; dp < HD / 16; ++dp) {
        uint32_t r[4];
        const int key = t * 16 + ((lane / 8) % 2) * 8 + lane % 8;
        ldmatrix_x4_trans(r, smem_addr(v_tile + fa_swizzle(key, dp * 2 + lane / 16, kRowBytes)));
        const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        mma_m16n8k16<false>(o[2 * dp], a, b0);
        mma_m16n8k16<false>(o[2 * dp + 1], a, b1);
      }
    }
  }

  // O / row sums, in the output type.
  NVHCQ_UNROLL
  for (int rr = 0; rr < 2; ++rr) {
    const int token = q_first + r0 + rr * 8;
    if (token >= n_tokens) continue;
    const float inv = 1.0f / row_sum[rr];
    const size_t at = (size_t)token * job.out_stride + (size_t)head * HD;
    NVHCQ_UNROLL
    for (int d = 0; d < HD / 8; ++d) {
      NVHCQ_UNROLL
      for (int e = 0; e < 2; ++e) {
        const float v = o[d][2 * rr + e] * inv;
        const int col = d * 8 + c0 + e;
        if (job.out_f16 == 2) {
          ((uint16_t*)job.out)[at + col] = float_to_bf16(v);
        } else if (job.out_f16 == 1) {
          ((uint16_t*)job.out)[at + col] = float_to_half(v);
        } else {
          ((float*)job.out)[at + col] = v;
        }
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(FA_THREADS) flash_prefill_hd64(const __grid_constant__ LlmAttentionJob job) {
  flash_prefill<64>(job);
}
extern "C" __global__ void __launch_bounds__(FA_THREADS) flash_prefill_hd128(const __grid_constant__ LlmAttentionJob job) {
  flash_prefill<128>(job);
}
