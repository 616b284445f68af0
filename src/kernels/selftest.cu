// Small kernels the runtime tests and `nvhcq info --selftest` launch: they check
// that arguments, grid and block sizes reach the kernel and results come back.
#include "common.cuh"

// out[i] = a * i + b for every element of a 1-D grid.
extern "C" __global__ void affine_fill(float* out, float a, float b, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * (float)i + b;
}

// out[i] = x[i] + y[i].
extern "C" __global__ void add_f32(float* out, const float* x, const float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

// counter[0] += 1 from one thread: launched many times in a row it counts launches.
extern "C" __global__ void increment(unsigned* counter) {
  if (threadIdx.x == 0 && blockIdx.x == 0) counter[0] += 1;
}

// Does nothing: for launch-latency measurements.
extern "C" __global__ void empty_kernel() {}

// Records the launch geometry the kernel sees, for QMD field checks.
extern "C" __global__ void report_geometry(unsigned* out) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 &&
      blockIdx.y == 0 && blockIdx.z == 0) {
    out[0] = blockDim.x; out[1] = blockDim.y; out[2] = blockDim.z;
    out[3] = gridDim.x; out[4] = gridDim.y; out[5] = gridDim.z;
  }
}

// Uses static and dynamic shared memory: out[block] = sum of in[block*blockDim .. +blockDim).
extern "C" __global__ void block_sum(float* out, const float* in) {
  extern __shared__ float partial[];
  unsigned t = threadIdx.x;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

// Needs per-thread local memory (an array indexed at run time) and so a stack.
extern "C" __global__ void local_memory_walk(unsigned* out, unsigned seed) {
  unsigned scratch[64];
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned i = 0; i < 64; ++i) scratch[i] = (seed + t) * (i + 1);
  unsigned idx = (seed ^ t) & 63, acc = 0;
  for (unsigned i = 0; i < 64; ++i) {
    acc += scratch[idx];
    idx = (idx * 5 + 1) & 63;
  }
  out[t] = acc;
}

// Writes through a pointer given as an argument: with a bad address it faults.
extern "C" __global__ void store_to(unsigned* where, unsigned value) { *where = value; }

// Each half of a 128-thread block sums its 64 inputs, meeting at its own named
// barrier (1 or 2, 64 threads): out[2 * block + half]. Needs a QMD that grants
// three barriers.
#define HALF_SYNC(h)                                         \
  do {                                                       \
    if (h)                                                   \
      asm volatile("bar.sync 2, 64;" ::: "memory");          \
    else                                                     \
      asm volatile("bar.sync 1, 64;" ::: "memory");          \
  } while (0)
extern "C" __global__ void named_barrier_halves(float* out, const float* in) {
  __shared__ float part[128];
  const unsigned t = threadIdx.x, half = t / 64, i = t % 64;
  part[t] = in[blockIdx.x * 128 + t];
  HALF_SYNC(half);
  for (unsigned s = 32; s > 0; s >>= 1) {
    if (i < s) part[t] += part[t + s];
    HALF_SYNC(half);
  }
  if (i == 0) out[2 * blockIdx.x + half] = part[t];
}

// Static and dynamic shared memory together: out[block] = the sum over the
// block's threads of (a value staged in the static array) + (values staged
// through all `dynamic_floats` of the dynamic array). The launch tests give it
// more than 48 KiB in all, which CUDA needs opted into.
extern "C" __global__ void shared_static_and_dynamic(float* out, unsigned dynamic_floats) {
  __shared__ float fixed[256];
  extern __shared__ float dynamic[];
  const unsigned t = threadIdx.x;
  fixed[t] = (float)t;
  for (unsigned i = t; i < dynamic_floats; i += blockDim.x) dynamic[i] = (float)(i % 7);
  __syncthreads();
  float s = fixed[blockDim.x - 1 - t];
  for (unsigned i = t; i < dynamic_floats; i += blockDim.x) s += dynamic[dynamic_floats - 1 - i];
  fixed[t] = s;
  __syncthreads();
  if (t == 0) {
    float total = 0.0f;
    for (unsigned i = 0; i < blockDim.x; ++i) total += fixed[i];
    out[blockIdx.x] = total;
  }
}

// Thread-block clusters of two (sm_90; elsewhere a plain kernel): each block
// writes its index into its partner's shared memory, and after the cluster's
// barrier reports out[3 * block] = its rank in the cluster, then the grid's
// width and the partner's index as found in its own shared memory.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SELFTEST_CLUSTER_OF_TWO __cluster_dims__(2, 1, 1)
#else
#define SELFTEST_CLUSTER_OF_TWO
#endif
extern "C" __global__ void SELFTEST_CLUSTER_OF_TWO cluster_partners(unsigned* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ unsigned from_partner;
  unsigned rank, remote;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"((unsigned)__cvta_generic_to_shared(&from_partner)), "r"(rank ^ 1u));
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(remote), "r"(blockIdx.x) : "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = rank;
    out[3 * blockIdx.x + 1] = gridDim.x;
    out[3 * blockIdx.x + 2] = from_partner;
  }
#else
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = 0;
    out[3 * blockIdx.x + 1] = gridDim.x;
    out[3 * blockIdx.x + 2] = blockIdx.x;
  }
#endif
}
