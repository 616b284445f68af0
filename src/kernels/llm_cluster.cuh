// One activation vector prepared by the blocks of a thread-block cluster
// together (sm_90): block `rank` of kCluster prepares every kCluster-th slice
// of the vector and writes what it prepares into the shared memory of every
// block of the cluster (distributed shared memory), so each block reads a
// kCluster-th of the input from L2 and does a kCluster-th of the arithmetic.
// The input is the same vector for every block of a launch: with 264 blocks
// each reading all of it, its lines are L2's hottest, and the preparation is
// about a third of a 1B decode layer (docs/perf-notes.md).
//
// ActShare<1> is the block alone: plain shared-memory stores, no barriers.
// ActShare<C> orders the cluster in these steps, every thread of every block
// taking part in each:
//   started()  arrive: this block runs (its shared memory may be written);
//   ready()    wait for every block's `started` -- before the first remote store;
//   total()    (normalized inputs) the blocks' partial sums exchanged;
//   finish()   every block's stores done and visible (release / acquire).
// A block exits only after finish(), after which no block writes another's
// shared memory.
#pragma once

#include "llm_device.cuh"

template <int kCluster>
struct ActShare;

template <>
struct ActShare<1> {
  enum { kBlocks = 1 };
  __device__ static int rank() { return 0; }
  __device__ static void started() {}
  __device__ static void ready() {}
  template <class T>
  __device__ static void put(T* p, T v) {
    *p = v;
  }
  // The block's `part` is the whole sum.
  __device__ static double total(double part, double*) { return part; }
  __device__ static void finish() {}
};

#ifndef NVHCQ_KERNEL_EMULATION
__device__ __forceinline__ uint32_t cluster_rank_sreg() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// The shared::cluster address of the same offset as `p` in block `rank`'s
// shared memory.
__device__ __forceinline__ uint32_t cluster_address(const void* p, uint32_t rank) {
  const uint32_t local = (uint32_t)__cvta_generic_to_shared(p);
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
__device__ __forceinline__ void cluster_store(uint32_t a, uint32_t v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ void cluster_store(uint32_t a, uint2 v) {
  asm volatile("st.shared::cluster.v2.u32 [%0], {%1, %2};" ::"r"(a), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ void cluster_store(uint32_t a, uint4 v) {
  asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void cluster_store(uint32_t a, int v) {
  cluster_store(a, (uint32_t)v);
}
__device__ __forceinline__ void cluster_store(uint32_t a, float v) {
  cluster_store(a, __float_as_uint(v));
}
__device__ __forceinline__ void cluster_store(uint32_t a, float4 v) {
  cluster_store(a, make_uint4(__float_as_uint(v.x), __float_as_uint(v.y), __float_as_uint(v.z),
                              __float_as_uint(v.w)));
}
__device__ __forceinline__ void cluster_store(uint32_t a, double v) {
  const unsigned long long b = (unsigned long long)__double_as_longlong(v);
  cluster_store(a, make_uint2((uint32_t)b, (uint32_t)(b >> 32)));
}

template <int kCluster>
struct ActShare {
  static_assert(kCluster >= 2 && kCluster <= 8, "a portable cluster holds at most 8 blocks");
  enum { kBlocks = kCluster };
  __device__ static int rank() { return (int)cluster_rank_sreg(); }
  __device__ static void started() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }
  __device__ static void ready() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }
  template <class T>
  __device__ static void put(T* p, T v) {
#pragma unroll
    for (int r = 0; r < kCluster; ++r) cluster_store(cluster_address(p, r), v);
  }
  // Every block's `part` (the block's sum, in all its threads) into slot
  // `rank` of every block's `slots`, then the sum in rank order: the same in
  // every block.
  __device__ static double total(double part, double* slots) {
    if (threadIdx.x == 0) put(slots + rank(), part);
    finish();
    double t = 0.0;
#pragma unroll
    for (int r = 0; r < kCluster; ++r) t += slots[r];
    return t;
  }
  __device__ static void finish() {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  }
};
#else
// The emulator runs a grid's blocks one after another, so the blocks of a
// cluster never meet there: what exchanges through a cluster is left to the
// GPU, and reaching such an exchange on the emulator stops the test.
template <int kCluster>
struct ActShare {
  enum { kBlocks = kCluster };
  static int rank() { __trap(); }
  static void started() { __trap(); }
  static void ready() { __trap(); }
  template <class T>
  static void put(T*, T) {
    __trap();
  }
  static double total(double, double*) { __trap(); }
  static void finish() { __trap(); }
};
#endif  // NVHCQ_KERNEL_EMULATION
