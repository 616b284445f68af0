// The persistent decode step: one launch per token that runs every phase of a
// LLaMA step (llm_jobs.cuh, LlmStepPhase) with one CTA per SM.
//
// Why: a step of ~85 separate launches spends a quarter of its time between
// kernels, and each matrix-vector launch starts by waiting for its first
// weights. (Not yet faster than those launches: docs/perf-notes.md.) Here the weights never wait for the activations: one producer warp
// per CTA streams the CTA's share of every matrix of the step, in phase order,
// into a ring of shared-memory slots (cp.async.bulk, completion counted on an
// mbarrier per slot) as far ahead as the ring allows -- through grid barriers,
// attention and activation preparation alike, since weights depend on nothing.
// The compute warps (LLM_STEP_COMPUTE_WARPS) prepare each phase's activations, take the staged rows
// slot by slot (llm_matvec_rows.cuh with kShared) and apply the epilogue; a
// grid-wide barrier separates phases whose inputs another CTA wrote.
//
// Every CTA must be resident at once (the host launches one per SM with more
// than half an SM's shared memory, so no two share one). Data other SMs wrote
// during the launch is read through L2 (ld.global.cg).
#include "llm_attention_block.cuh"
#include "llm_bulk.cuh"
#include "llm_jobs.cuh"
#include "llm_matvec_rows.cuh"

#define DS_COMPUTE_WARPS LLM_STEP_COMPUTE_WARPS
#define DS_COMPUTE_THREADS (DS_COMPUTE_WARPS * 32)
#define DS_THREADS LLM_STEP_THREADS
#define DS_MAX_SLOTS LLM_STEP_MAX_SLOTS
#define DS_PHASE_WORDS (sizeof(LlmStepPhase) / 16)

static_assert(sizeof(LlmStepPhase) % 16 == 0, "phases are copied in 16-byte words");
static_assert(DS_PHASE_WORDS <= 32, "one warp copies a phase");
static_assert(sizeof(AttentionShared) <= LLM_ATTN_SHARED_BYTES, "attention's shared memory as the host plans it");

// Named barriers (0 is __syncthreads): the compute warps; the 128 threads of
// an attention block.
struct ComputeSync {
  __device__ static void sync() { asm volatile("bar.sync 1, %0;" ::"n"(DS_COMPUTE_THREADS) : "memory"); }
};
struct AttentionSync {
  __device__ static void sync() { asm volatile("bar.sync 2, %0;" ::"n"(LLM_ATTN_THREADS) : "memory"); }
};

// --- Timestamps ----------------------------------------------------------------

__device__ __forceinline__ uint64_t global_timer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// --- Chunks of a matrix-vector phase -----------------------------------------

struct Chunk {
  int seg;   // segment (swiglu: 0, the gate/up pair)
  int row0;  // first row within the segment
  int rows;
  int out0;  // first output row (segments' rows concatenated)
};

__device__ __forceinline__ Chunk chunk_of(const LlmStepPhase& ph, int c) {
  Chunk k;
  k.seg = 0;
  k.out0 = 0;
  while (k.seg + 1 < ph.mv.segments && c >= ph.chunks[k.seg]) {
    c -= ph.chunks[k.seg];
    k.out0 += ph.mv.m[k.seg].rows;
    ++k.seg;
  }
  k.row0 = c * ph.chunk_rows;
  k.rows = min(ph.chunk_rows, ph.mv.m[k.seg].rows - k.row0);
  k.out0 += k.row0;
  return k;
}

__device__ __forceinline__ int phase_chunks(const LlmStepPhase& ph) {
  int n = 0;
  for (int s = 0; s < ph.mv.segments; ++s) n += ph.chunks[s];
  return n;
}

// The matrices of a chunk: one, or gate and up for swiglu.
__device__ __forceinline__ int chunk_matrices(const LlmStepPhase& ph) { return ph.epilogue == LLM_EPI_SWIGLU ? 2 : 1; }
__device__ __forceinline__ const LlmGpuMatrix& chunk_matrix(const LlmStepPhase& ph, const Chunk& k, int i) {
  return ph.mv.m[ph.epilogue == LLM_EPI_SWIGLU ? i : k.seg];
}

// Rows [row0, row0 + rows) of m staged at `slot` from byte `at` on, array by
// array; returns the view of them (row 0 = row0) and advances `at`.
__device__ __forceinline__ uint64_t stage_array(const LlmGpuMatrix& m, int array, int rows, uint8_t* slot,
                                                uint32_t* at) {
  const uint32_t bytes = (uint32_t)llm_row_bytes(m.format, m.cols, array) * rows;
  const uint64_t where = bytes ? (uint64_t)(slot + *at) : 0;
  *at += bytes;  // a multiple of 16 (the host's chunk rows)
  return where;
}
__device__ __forceinline__ LlmGpuMatrix staged_view(const LlmGpuMatrix& m, int rows, uint8_t* slot, uint32_t* at) {
  LlmGpuMatrix v = m;
  v.qs = stage_array(m, 0, rows, slot, at);
  v.qh = stage_array(m, 1, rows, slot, at);
  v.scales = stage_array(m, 2, rows, slot, at);
  v.super = stage_array(m, 3, rows, slot, at);
  v.rows = rows;
  return v;
}

// --- The producer warp ----------------------------------------------------------

__device__ void produce(const LlmStepParams& P, uint8_t* slots, uint64_t* full, uint64_t* empty) {
  const LlmStepPhase* phases = (const LlmStepPhase*)P.phases;
  int k = 0;  // chunks staged so far in this step
  for (int p = 0; p < P.count; ++p) {
    const LlmStepPhase& ph = phases[p];
    if (ph.kind != LLM_PHASE_MATVEC) continue;
    const int n = phase_chunks(ph);
    for (int c = blockIdx.x; c < n; c += gridDim.x, ++k) {
      const Chunk ch = chunk_of(ph, c);
      const int slot = k % P.slots, round = k / P.slots;
      if (round > 0) mbarrier_wait(&empty[slot], (round - 1) & 1);
      uint8_t* base = slots + (size_t)slot * P.slot_bytes;
      uint32_t bytes = 0;
      for (int i = 0; i < chunk_matrices(ph); ++i) {
        const LlmGpuMatrix& m = chunk_matrix(ph, ch, i);
        for (int a = 0; a < 4; ++a) bytes += (uint32_t)llm_row_bytes(m.format, m.cols, a) * ch.rows;
      }
      mbarrier_expect_bytes(&full[slot], bytes);
      uint32_t at = 0;
      for (int i = 0; i < chunk_matrices(ph); ++i) {
        const LlmGpuMatrix& m = chunk_matrix(ph, ch, i);
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const uint64_t array = a == 0 ? m.qs : a == 1 ? m.qh : a == 2 ? m.scales : m.super;
          const uint32_t row_bytes = (uint32_t)llm_row_bytes(m.format, m.cols, a);
          if (row_bytes == 0) continue;
          bulk_load(base + at, (const uint8_t*)array + (size_t)ch.row0 * row_bytes, row_bytes * ch.rows,
                    &full[slot]);
          at += row_bytes * ch.rows;  // a multiple of 16 (the host's chunk rows)
        }
      }
    }
  }
}

// --- The compute warps ------------------------------------------------------------

// What the compute warps share besides the slots.
struct StepShared {
  uint64_t full[DS_MAX_SLOTS], empty[DS_MAX_SLOTS];
  __align__(16) uint4 phase[2][DS_PHASE_WORDS];  // this phase and the next (copied ahead)
  double red[DS_COMPUTE_WARPS];
  unsigned long long best[DS_COMPUTE_WARPS];
  float partial[DS_MAX_SLOTS][DS_COMPUTE_WARPS][2];  // parts of rows shared by warps (gate, up)
  int done[DS_MAX_SLOTS][DS_COMPUTE_WARPS];         // parts finished per shared row
};
static_assert(sizeof(StepShared) <= LLM_STEP_CONTROL_BYTES, "the host places the work area after it");

// Lane 0: the finished row's result (y; swiglu: gate y and up u) into the output.
__device__ __forceinline__ void epilogue(const LlmStepPhase& ph, const Chunk& ch, int i, float y, float u,
                                         unsigned long long* best) {
  float* out = (float*)ph.mv.out;
  const int row = ch.out0 + i;
  switch (ph.epilogue) {
    case LLM_EPI_STORE: {
      const float* bias = (const float*)ph.mv.bias[ch.seg];
      out[row] = bias ? y + bias[ch.row0 + i] : y;
      break;
    }
    case LLM_EPI_ADD: out[row] = __ldcg(out + row) + y; break;
    case LLM_EPI_SWIGLU: out[row] = llm_silu_times(y, u); break;
    default: {
      out[row] = y;
      const unsigned long long key = argmax_key(y, row);
      *best = key > *best ? key : *best;
    }
  }
}

template <int kAct>
__device__ void run_matvec(const LlmStepParams& P, const LlmStepPhase& ph, StepShared& sh, uint8_t* work,
                           uint8_t* slots, int* k) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const ActView a =
      prepare_activations<kAct, DS_COMPUTE_THREADS, ComputeSync>((const float*)ph.mv.in, (const float*)ph.mv.norm,
                                                                 ph.mv.eps, ph.mv.cols, work, sh.red);
  ComputeSync::sync();
  unsigned long long best = 0;
  const int n = phase_chunks(ph), parts = ph.parts;
  const bool swiglu = ph.epilogue == LLM_EPI_SWIGLU;
  for (int c = blockIdx.x; c < n; c += gridDim.x, ++*k) {
    const Chunk ch = chunk_of(ph, c);
    const int slot = *k % P.slots;
    mbarrier_wait(&sh.full[slot], (*k / P.slots) & 1);
    uint8_t* base = slots + (size_t)slot * P.slot_bytes;
    uint32_t at = 0;
    const LlmGpuMatrix m0 = staged_view(chunk_matrix(ph, ch, 0), ch.rows, base, &at);
    const LlmGpuMatrix m1 = swiglu ? staged_view(chunk_matrix(ph, ch, 1), ch.rows, base, &at) : m0;
    const int units = row_units(m0, kAct);
    for (int t = warp; t < ch.rows * parts; t += DS_COMPUTE_WARPS) {
      const int i = t / parts, part = t % parts;
      const int begin = (int)((long long)units * part / parts), end = (int)((long long)units * (part + 1) / parts);
      float y, u = 0.0f;
      rows_dot<kAct, 1, true>(m0, i, a, begin, end, &y);
      if (swiglu) rows_dot<kAct, 1, true>(m1, i, a, begin, end, &u);
      if (lane != 0) continue;
      if (parts == 1) {
        epilogue(ph, ch, i, y, u, &best);
        continue;
      }
      // The last warp to finish a part of row i sums the parts in order.
      volatile float* pr = &sh.partial[slot][0][0];
      pr[2 * t] = y;
      pr[2 * t + 1] = u;
      __threadfence_block();
      if (atomicAdd(&sh.done[slot][i], 1) == parts - 1) {
        __threadfence_block();
        sh.done[slot][i] = 0;
        y = 0.0f;
        u = 0.0f;
        for (int j = 0; j < parts; ++j) {
          y += pr[2 * (i * parts + j)];
          u += pr[2 * (i * parts + j) + 1];
        }
        epilogue(ph, ch, i, y, u, &best);
      }
    }
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&sh.empty[slot]);
  }
  if (ph.epilogue == LLM_EPI_LOGITS) {
    if (lane == 0) sh.best[warp] = best;
    ComputeSync::sync();
    if (threadIdx.x == 0) {
      unsigned long long b = 0;
      for (int w = 0; w < DS_COMPUTE_WARPS; ++w) b = sh.best[w] > b ? sh.best[w] : b;
      if (b) atomicMax(&((LlmStepState*)ph.mv.state)->argmax, b);
    }
  }
}

__device__ void run_attention(const LlmStepPhase& ph, uint8_t* work) {
  if (threadIdx.x >= LLM_ATTN_THREADS) return;
  const LlmAttentionJob& job = ph.at;
  AttentionShared& ash = *(AttentionShared*)work;
  const int units = attention_units(job);
  for (int v = blockIdx.x; v < units * job.splits; v += gridDim.x) {
    if (job.heads_per_block == 1) {
      attention_unit<1, AttentionSync>(job, ash, v % units, v / units, 0);
    } else {
      attention_unit<AT_MAX_GQA, AttentionSync>(job, ash, v % units, v / units, 0);
    }
    AttentionSync::sync();  // the shared memory is the next block's
  }
}

// x = the embedding row of the step's token, its groups spread over all CTAs.
__device__ void run_embed(const LlmStepPhase& ph) {
  const LlmGpuMatrix& m = ph.mv.m[0];
  const int token = __ldcg(&((const LlmStepState*)ph.mv.state)->token);
  float* x = (float*)ph.mv.out;
  const int groups = m.cols / LLM_GROUP;
  for (int g = blockIdx.x * DS_COMPUTE_THREADS + threadIdx.x; g < groups; g += gridDim.x * DS_COMPUTE_THREADS) {
    float v[LLM_GROUP];
    llm_dequant_group(m, token, g, v);
#pragma unroll
    for (int j = 0; j < LLM_GROUP; ++j) x[g * LLM_GROUP + j] = v[j];
  }
}

// As finish_step (llm_step.cu), by one thread after the logits' barrier.
__device__ void run_finish(const LlmStepPhase& ph) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  LlmStepState* state = (LlmStepState*)ph.mv.state;
  const unsigned long long best = __ldcg(&state->argmax);
  // (No logit seen: token 0 rather than an index outside the vocabulary.)
  const int32_t token = best ? (int32_t)(0xffffffffu - (uint32_t)(best & 0xffffffffu)) : 0;
  const int pos = __ldcg(&state->pos);
  state->token = token;
  ((int32_t*)ph.mv.in)[pos] = token;
  state->pos = pos + 1;
  state->argmax = 0;
}

// All CTAs' phase work before it is visible to all after it.
__device__ __forceinline__ void grid_barrier(const LlmStepParams& P, unsigned long long base, int b) {
  ComputeSync::sync();
  if (threadIdx.x == 0) {
    unsigned long long* counter = (unsigned long long*)P.barrier;
    const unsigned long long target = base + (unsigned long long)(b + 1) * gridDim.x;
    __threadfence();
    atomicAdd(counter, 1ull);
    unsigned long long seen;
    do {
      asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(counter) : "memory");
    } while (seen < target);
    __threadfence();
    if (P.timestamps && blockIdx.x == 0) ((uint64_t*)P.timestamps)[b + 1] = global_timer();
  }
  ComputeSync::sync();
}

extern "C" __global__ void __launch_bounds__(DS_THREADS, 1) llm_decode_step(const __grid_constant__ LlmStepParams P) {
  extern __shared__ __align__(128) uint8_t smem[];
  StepShared& sh = *(StepShared*)smem;
  uint8_t* work = smem + LLM_STEP_CONTROL_BYTES;
  uint8_t* slots = work + P.work_bytes;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  if (threadIdx.x == 0) {
    for (int s = 0; s < P.slots; ++s) {
      mbarrier_init(&sh.full[s], 1);
      mbarrier_init(&sh.empty[s], DS_COMPUTE_WARPS);
    }
    mbarrier_init_fence();
  }
  for (int i = threadIdx.x; i < DS_MAX_SLOTS * DS_COMPUTE_WARPS; i += DS_THREADS) (&sh.done[0][0])[i] = 0;
  __syncthreads();

  if (warp == DS_COMPUTE_WARPS) {
    if (lane == 0) produce(P, slots, sh.full, sh.empty);
    return;
  }

  // The barrier counter only grows: this launch's barriers count from the
  // multiple of (barriers per step x CTAs) it started at. (A CTA reads it at
  // most gridDim.x - 1 arrivals past that: the first barrier waits for it.)
  unsigned long long base = 0;
  if (threadIdx.x == 0) {
    const unsigned long long per_step = (unsigned long long)P.barriers * gridDim.x;
    base = __ldcg((const unsigned long long*)P.barrier);
    base -= base % per_step;
    if (P.timestamps && blockIdx.x == 0) ((uint64_t*)P.timestamps)[0] = global_timer();
  }
  const uint4* phases = (const uint4*)P.phases;
  if (warp == 0 && lane < (int)DS_PHASE_WORDS) sh.phase[0][lane] = __ldg(phases + lane);
  ComputeSync::sync();

  int k = 0;  // chunks consumed so far (the producer's count)
  int b = 0;  // grid barriers passed
  for (int p = 0; p < P.count; ++p) {
    const LlmStepPhase& ph = *(const LlmStepPhase*)sh.phase[p & 1];
    // The next phase's description, loaded while this one runs.
    uint4 next = make_uint4(0, 0, 0, 0);
    const bool copy_next = warp == 0 && lane < (int)DS_PHASE_WORDS && p + 1 < P.count;
    if (copy_next) next = __ldg(phases + (size_t)(p + 1) * DS_PHASE_WORDS + lane);
    switch (ph.kind) {
      case LLM_PHASE_EMBED: run_embed(ph); break;
      case LLM_PHASE_ATTENTION: run_attention(ph, work); break;
      case LLM_PHASE_FINISH: run_finish(ph); break;
      default:
        switch (ph.act) {
          case kActQ8x32: run_matvec<kActQ8x32>(P, ph, sh, work, slots, &k); break;
          case kActQ8K: run_matvec<kActQ8K>(P, ph, sh, work, slots, &k); break;
          case kActF16: run_matvec<kActF16>(P, ph, sh, work, slots, &k); break;
          case kActBF16: run_matvec<kActBF16>(P, ph, sh, work, slots, &k); break;
          default: run_matvec<kActF32>(P, ph, sh, work, slots, &k); break;
        }
    }
    if (ph.kind == LLM_PHASE_FINISH && P.timestamps && blockIdx.x == 0 && threadIdx.x == 0) {
      ((uint64_t*)P.timestamps)[b + 1] = global_timer();
    }
    if (copy_next) sh.phase[(p + 1) & 1][lane] = next;
    if (ph.sync_after) {
      grid_barrier(P, base, b++);
    } else {
      ComputeSync::sync();  // the shared work area and the phase copy change hands
    }
  }
}
