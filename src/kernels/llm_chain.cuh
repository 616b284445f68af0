// Self-ordered launches of a decode step. A decode step is 80-160 dependent
// launches of a few microseconds each; when the GPU orders them, each one
// starts only after the one before has completed, and the launch turnaround
// and the new blocks' first memory round trip are paid once per launch. A
// chained step is submitted without that ordering (gpu::Accelerator::
// launch_self_ordered), so a launch's blocks take SMs as the blocks before
// them leave and start their weight rows on the way to L2; each block then
// waits until every block of the step's earlier launches has finished, and
// counts itself finished at its end.
//
// The count lives in the step state: chain_done (blocks finished since the
// state was written) and chain_base (its value when the current step began,
// advanced by the step's last launch, finish_step). A launch waits for
// chain_done - chain_base >= link.after, the blocks of the launches before it.
//
// Deadlock-free because the GPU hands out the blocks of a queue's launches in
// launch order: a waiting block only waits for blocks that were handed out
// before it, and those wait only for earlier ones.
//
// Memory: after a barrier, one thread counts the block with a release
// reduction at GPU scope (red.release.gpu), which orders the block's writes
// before the count without stalling the thread for them, so the block leaves
// its SM at once; the waiting thread's acquire load (which also drops the SM's
// L1 lines) and the barrier after it order the block's later reads.
#pragma once

#include "llm_device.cuh"
#include "llm_jobs.cuh"

// A load of a count at GPU scope. An acquire also orders the thread's later
// reads after it (and drops the SM's L1 lines); a relaxed one orders nothing.
template <bool kAcquire>
__device__ __forceinline__ uint32_t chain_load(const uint32_t* p) {
#ifdef NVHCQ_KERNEL_EMULATION
  return __ldcg(p);
#else
  uint32_t v;
  if constexpr (kAcquire) {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  }
  return v;
#endif
}

// Decode timeline (LLM_TRACE builds, `nvhcq bench --timeline`): thread 0 of
// each block of a chained launch writes %globaltimer into the step state's
// trace array, at the block's slot (the blocks before its launch, link.after,
// plus its index in the grid). The array's address is read once, at the
// block's first stamp (its start, before the wait), after the timer, so that
// no stamp waits on a load (a start stamped after it read one round trip to
// L2 late).
// Other builds compile no stamps.
__device__ __forceinline__ void chain_stamp(const LlmChainLink& link, const LlmStepState* state, int what) {
#if defined(LLM_TRACE) && !defined(NVHCQ_KERNEL_EMULATION)
  __shared__ uint64_t trace;
  if (!link.chained || threadIdx.x != 0) return;
  uint64_t t;
  // (The clobber keeps the address's load after the timer's read.)
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
  if (what == LLM_STAMP_START) trace = state->trace;
  if (trace == 0) return;
  const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  ((uint64_t*)trace)[((uint64_t)link.after + block) * LLM_STAMPS + what] = t;
#else
  (void)link;
  (void)state;
  (void)what;
#endif
}

// CHAIN_BASE_RELAXED=0 reads the step's chain_base with an acquire as well,
// before the first poll (for measurements: 0.6% slower 1B Q6_K decode on the
// H200, docs/perf-notes.md).
#ifndef CHAIN_BASE_RELAXED
#define CHAIN_BASE_RELAXED 1
#endif

// Every thread of the block: returns once the launches this one follows have
// finished (at once when not chained). Returns the step's chain_base (thread 0
// only; finish_step advances it).
__device__ __forceinline__ uint32_t chain_wait(const LlmChainLink& link, const LlmStepState* state) {
  uint32_t base = 0;
  if (!link.chained) return base;
  chain_stamp(link, state, LLM_STAMP_START);
  if (threadIdx.x == 0) {
    // The base needs no acquire of its own: only the step's last launch
    // writes it, after every other block of the step has finished, and a step
    // starts after the one before has completed. Read without ordering, it is
    // on its way with the first poll (one round trip to L2 where two were
    // paid in turn, by every block that starts after the launches ahead end).
    base = chain_load<!CHAIN_BASE_RELAXED>(&state->chain_base);
    while (chain_load<true>(&state->chain_done) - base < (uint32_t)link.after) {
#ifndef NVHCQ_KERNEL_EMULATION
      // (Polling with relaxed loads and one fence after, or sleeping 0 or
      // 256 ns instead, measured the same.)
      __nanosleep(64);
#endif
    }
  }
  chain_stamp(link, state, LLM_STAMP_RELEASED);
  __syncthreads();
  return base;
}

// CHAIN_RELEASE_RED=0 counts with __threadfence and atomicAdd instead, the
// thread waiting for the fence (for measurements: 0.4-1.2% slower decode on
// the H200, docs/perf-notes.md).
#ifndef CHAIN_RELEASE_RED
#define CHAIN_RELEASE_RED 1
#endif

// Every thread of the block, after all of its writes: counts the block
// finished -- and with `blocks` > 1 as many blocks of its launch in all: a
// block with nothing to do may leave at once, neither waiting nor counting
// itself (nor stamping: the timeline leaves it out), where another block of
// its launch counts it. The count then reaches the launch's blocks only once
// every block that writes has finished.
__device__ __forceinline__ void chain_signal(const LlmChainLink& link, LlmStepState* state, uint32_t blocks = 1) {
  if (!link.chained) return;
  __syncthreads();
  chain_stamp(link, state, LLM_STAMP_DONE);
  if (threadIdx.x == 0) {
#if defined(NVHCQ_KERNEL_EMULATION) || !CHAIN_RELEASE_RED
    __threadfence();
    atomicAdd(&state->chain_done, blocks);
#else
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(&state->chain_done), "r"(blocks) : "memory");
#endif
  }
}
