// Batched matrix multiply for the tensor layer: C[b] = A[b] @ B[b] with A and B
// read through arbitrary strides (transposed and broadcast operands need no copy)
// and C dense row-major. 64x64 output tiles, k in steps of 16 staged through
// shared memory, each of the 256 threads accumulating a 4x4 block in the compute
// type (f32 for f16/bf16/f32, wrapping int64 for integers) and rounding once.
#include "tensor_common.cuh"

struct nvt_mm_shape {
  long long m, n, k;
  long long batch[4];  // batch extents (outermost first); unused ones are 1
  int batch_dims;
};

// Element (i, j) of matrix b of an operand is at
// offset + sum(batch index[d] * batch_stride[d]) + i * row_stride + j * col_stride.
struct nvt_mm_operand {
  long long offset, row_stride, col_stride;
  long long batch_stride[4];
};

#define NVT_MM_TILE 64
#define NVT_MM_K 16

// Matrices in the batch (the product of the batch extents).
NVT_FN long long nvt_mm_batches(const nvt_mm_shape& s) {
  long long batches = 1;
  for (int d = 0; d < s.batch_dims; ++d) batches *= s.batch[d];
  return batches;
}

// Where matrix z of the batch starts in A and in B.
NVT_FN void nvt_mm_batch_offsets(const nvt_mm_shape& s, const nvt_mm_operand& ao,
                                 const nvt_mm_operand& bo, long long z, long long* a_off,
                                 long long* b_off) {
  *a_off = ao.offset;
  *b_off = bo.offset;
  for (int d = s.batch_dims - 1; d >= 0; --d) {
    const long long i = z % s.batch[d];
    z /= s.batch[d];
    *a_off += i * ao.batch_stride[d];
    *b_off += i * bo.batch_stride[d];
  }
}

template <typename TR>
__device__ void nvt_matmul(void* out_v, const void* a_v, const void* b_v, nvt_mm_shape s,
                           nvt_mm_operand ao, nvt_mm_operand bo) {
  typedef typename TR::S S;
  typedef typename TR::C C;
  S* out = (S*)out_v;
  const S* a = (const S*)a_v;
  const S* b = (const S*)b_v;
  __shared__ C as[NVT_MM_K][NVT_MM_TILE + 1];
  __shared__ C bs[NVT_MM_K][NVT_MM_TILE + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long m0 = (long long)blockIdx.y * NVT_MM_TILE,
                  n0 = (long long)blockIdx.x * NVT_MM_TILE;
  const long long batches = nvt_mm_batches(s);
  for (long long z = blockIdx.z; z < batches; z += gridDim.z) {
    long long a_off, b_off;
    nvt_mm_batch_offsets(s, ao, bo, z, &a_off, &b_off);
    C acc[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) acc[i][j] = 0;
    for (long long k0 = 0; k0 < s.k; k0 += NVT_MM_K) {
      // Stage the A tile (64 rows x 16 k) and the B tile (16 k x 64 columns),
      // consecutive threads walking each operand's contiguous axis.
      for (int e = threadIdx.x; e < NVT_MM_TILE * NVT_MM_K; e += blockDim.x) {
        int mm, kk;
        if (ao.col_stride == 1) {
          kk = e % NVT_MM_K;
          mm = e / NVT_MM_K;
        } else {
          mm = e % NVT_MM_TILE;
          kk = e / NVT_MM_TILE;
        }
        const long long gm = m0 + mm, gk = k0 + kk;
        as[kk][mm] = (gm < s.m && gk < s.k)
                         ? TR::load(a[a_off + gm * ao.row_stride + gk * ao.col_stride])
                         : (C)0;
      }
      for (int e = threadIdx.x; e < NVT_MM_TILE * NVT_MM_K; e += blockDim.x) {
        int nn, kk;
        if (bo.row_stride == 1 && bo.col_stride != 1) {
          kk = e % NVT_MM_K;
          nn = e / NVT_MM_K;
        } else {
          nn = e % NVT_MM_TILE;
          kk = e / NVT_MM_TILE;
        }
        const long long gn = n0 + nn, gk = k0 + kk;
        bs[kk][nn] = (gn < s.n && gk < s.k)
                         ? TR::load(b[b_off + gk * bo.row_stride + gn * bo.col_stride])
                         : (C)0;
      }
      __syncthreads();
      for (int kk = 0; kk < NVT_MM_K; ++kk) {
        C av[4], bv[4];
        for (int i = 0; i < 4; ++i) av[i] = as[kk][ty + 16 * i];
        for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx + 16 * j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) acc[i][j] = TR::mac(acc[i][j], av[i], bv[j]);
      }
      __syncthreads();
    }
    S* c = out + z * s.m * s.n;
    for (int i = 0; i < 4; ++i) {
      const long long gm = m0 + ty + 16 * i;
      if (gm >= s.m) continue;
      for (int j = 0; j < 4; ++j) {
        const long long gn = n0 + tx + 16 * j;
        if (gn < s.n) c[gm * s.n + gn] = TR::store(acc[i][j]);
      }
    }
  }
}

// Products with at most NVT_MM_THIN_ROWS rows (a batch-1 linear layer): the
// tiled kernel would run N/64 CTAs that each walk all of K behind barriers. Here
// a CTA owns 32 columns; its 32 warps take every 32nd k (a warp reads 32
// neighbouring elements of a B row per step, A's elements are broadcasts: many
// loads in flight per SM), and the warps' partial sums are added in a fixed
// order (deterministic).
#define NVT_MM_THIN_ROWS 4
#define NVT_MM_THIN_SLICES 32

template <typename TR>
__device__ void nvt_matmul_thin(void* out_v, const void* a_v, const void* b_v, nvt_mm_shape s,
                                nvt_mm_operand ao, nvt_mm_operand bo) {
  typedef typename TR::S S;
  typedef typename TR::C C;
  S* out = (S*)out_v;
  const S* a = (const S*)a_v;
  const S* b = (const S*)b_v;
  __shared__ C partial[NVT_MM_THIN_SLICES][NVT_MM_THIN_ROWS][32];
  const int lane = threadIdx.x % 32, slice = threadIdx.x / 32;
  const long long n = (long long)blockIdx.x * 32 + lane;
  const int rows = (int)s.m;
  const long long batches = nvt_mm_batches(s);
  for (long long z = blockIdx.z; z < batches; z += gridDim.z) {
    long long a_off, b_off;
    nvt_mm_batch_offsets(s, ao, bo, z, &a_off, &b_off);
    C acc[NVT_MM_THIN_ROWS];
    for (int i = 0; i < NVT_MM_THIN_ROWS; ++i) acc[i] = 0;
    if (n < s.n) {
      const S* bcol = b + b_off + n * bo.col_stride;
#pragma unroll 8
      for (long long k = slice; k < s.k; k += NVT_MM_THIN_SLICES) {
        const C bv = TR::load(bcol[k * bo.row_stride]);
        for (int i = 0; i < NVT_MM_THIN_ROWS; ++i) {
          if (i < rows) {
            acc[i] =
                TR::mac(acc[i], TR::load(a[a_off + i * ao.row_stride + k * ao.col_stride]), bv);
          }
        }
      }
    }
    for (int i = 0; i < NVT_MM_THIN_ROWS; ++i) partial[slice][i][lane] = acc[i];
    __syncthreads();
    if (slice == 0 && n < s.n) {
      S* c = out + z * s.m * s.n;
      for (int i = 0; i < rows; ++i) {
        C sum = partial[0][i][lane];
        // mac(sum, p, 1): the traits' addition (wrapping for integers), exact.
        for (int t = 1; t < NVT_MM_THIN_SLICES; ++t) sum = TR::mac(sum, partial[t][i][lane], (C)1);
        c[i * s.n + n] = TR::store(sum);
      }
    }
    __syncthreads();
  }
}

#define NVT_MM_PARAMS \
  (void* out, const void* a, const void* b, nvt_mm_shape s, nvt_mm_operand ao, nvt_mm_operand bo)
#define NVT_MM_ARGS (out, a, b, s, ao, bo)
NVT_FLOAT_KERNELS(nvt_matmul, NVT_MM_PARAMS, NVT_MM_ARGS)
NVT_INT_KERNELS(nvt_matmul, NVT_MM_PARAMS, NVT_MM_ARGS)
NVT_FLOAT_KERNELS_SIZED(nvt_matmul_thin, 1024, NVT_MM_PARAMS, NVT_MM_ARGS)
NVT_INT_KERNELS_SIZED(nvt_matmul_thin, 1024, NVT_MM_PARAMS, NVT_MM_ARGS)
