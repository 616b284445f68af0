// Values handed to the next launch tagged with the launch that wrote them. A
// self-ordered launch waits for the step's count of finished blocks
// (llm_chain.cuh): the last block ahead orders its writes before its count (a
// release, which waits for them to reach L2), the count travels to L2, the
// waiting block's next poll sees it, and only then does the block ask for the
// values -- about three round trips to L2 between the last value written and
// its use, on the step's critical path. A decode attention block needs 3 *
// head_dim values of the Q/K/V launch, a few per thread. Written as one 64-bit
// word each, the value in the low half and the writing launch's tag in the
// high one, every value is its own flag: the reader polls the words it needs
// until each carries the tag it expects, one round trip after the last one is
// written. An aligned 64-bit access is single-copy atomic, so a word never
// pairs an old value with a new tag.
//
// A tag is the step state's chain_base plus an offset the plan gives both
// launches (one more than the blocks of the step before the writer). The count
// only grows (the host never rewrites it; llm_jobs.cuh), so the tag a reader
// expects differs from that of every earlier writer of the buffer, whose
// previous writer is at most one step back.
#pragma once

#include "llm_chain.cuh"

// The tag of the launch given `offset`, for this step. The base is final
// before the step's first block starts (llm_chain.cuh), so a relaxed load
// serves, and it can be issued before anything else.
__device__ __forceinline__ uint32_t launch_tag(const LlmStepState* state, int32_t offset) {
  return chain_load<false>(&state->chain_base) + (uint32_t)offset;
}

// (A volatile store: a relaxed one, at system scope.)
__device__ __forceinline__ void store_tagged(uint64_t* p, float v, uint32_t tag) {
  *(volatile uint64_t*)p = (uint64_t)tag << 32 | __float_as_uint(v);
}

__device__ __forceinline__ uint64_t load_word(const uint64_t* p) {
#ifdef NVHCQ_KERNEL_EMULATION
  return *(const volatile uint64_t*)p;
#else
  uint64_t w;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
#endif
}

// N tagged words a thread waits for: `v` holds their values once each has
// carried the tag.
template <int N>
struct TaggedWords {
  const uint64_t* at[N];
  float v[N];
  bool have[N];

  __device__ __forceinline__ explicit TaggedWords(const uint64_t* const (&p)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      at[i] = p[i];
      v[i] = 0.0f;
      have[i] = false;
    }
  }
  // One round trip: asks for every word not yet held; returns whether all are.
  __device__ __forceinline__ bool poll(uint32_t tag) {
    uint64_t w[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (!have[i]) w[i] = load_word(at[i]);
    }
    bool all = true;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (!have[i] && (uint32_t)(w[i] >> 32) == tag) {
        v[i] = __uint_as_float((uint32_t)w[i]);
        have[i] = true;
      }
      all = all && have[i];
    }
    return all;
  }
  __device__ __forceinline__ void wait(uint32_t tag) {
    while (!poll(tag)) {
#ifdef NVHCQ_KERNEL_EMULATION
      __trap();  // launches run one after another: the writer has run, or never will
#else
      __nanosleep(32);
#endif
    }
  }
};
