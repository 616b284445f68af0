#include "cpu/matmul.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/strided.h"
#include "cpu/thread_pool.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define NVHCQ_GEMM_AVX2 1
#endif

namespace nvhcq::cpu {
namespace {

template <typename T> struct Blocking;
template <> struct Blocking<float> {
  static constexpr int64_t MR = 6, NR = 16, KC = 256, MC = 72, NC = 256;
};
template <> struct Blocking<double> {
  static constexpr int64_t MR = 6, NR = 8, KC = 256, MC = 72, NC = 128;
};

// c[r*ldc + j] += sum_kk ap[kk*MR + r] * bp[kk*NR + j] for an MR x NR tile.
template <typename T>
void micro_kernel(int64_t kb, const T* ap, const T* bp, T* c, int64_t ldc) {
  constexpr int64_t MR = Blocking<T>::MR, NR = Blocking<T>::NR;
#if NVHCQ_GEMM_AVX2
  if constexpr (std::is_same_v<T, float>) {
    __m256 acc[MR][2];
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t kk = 0; kk < kb; ++kk) {
      __m256 b0 = _mm256_loadu_ps(bp + kk * NR), b1 = _mm256_loadu_ps(bp + kk * NR + 8);
      for (int r = 0; r < MR; ++r) {
        __m256 av = _mm256_broadcast_ss(ap + kk * MR + r);
        acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < MR; ++r) {
      _mm256_storeu_ps(c + r * ldc, _mm256_add_ps(_mm256_loadu_ps(c + r * ldc), acc[r][0]));
      _mm256_storeu_ps(c + r * ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + r * ldc + 8), acc[r][1]));
    }
    return;
  } else {
    __m256d acc[MR][2];
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_pd();
    for (int64_t kk = 0; kk < kb; ++kk) {
      __m256d b0 = _mm256_loadu_pd(bp + kk * NR), b1 = _mm256_loadu_pd(bp + kk * NR + 4);
      for (int r = 0; r < MR; ++r) {
        __m256d av = _mm256_broadcast_sd(ap + kk * MR + r);
        acc[r][0] = _mm256_fmadd_pd(av, b0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_pd(av, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < MR; ++r) {
      _mm256_storeu_pd(c + r * ldc, _mm256_add_pd(_mm256_loadu_pd(c + r * ldc), acc[r][0]));
      _mm256_storeu_pd(c + r * ldc + 4, _mm256_add_pd(_mm256_loadu_pd(c + r * ldc + 4), acc[r][1]));
    }
    return;
  }
#else
  T acc[MR][NR] = {};
  for (int64_t kk = 0; kk < kb; ++kk) {
    for (int r = 0; r < MR; ++r) {
      T av = ap[kk * MR + r];
      for (int j = 0; j < NR; ++j) acc[r][j] += av * bp[kk * NR + j];
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) c[r * ldc + j] += acc[r][j];
#endif
}

// Packs rows [0, mb) x cols [0, kb) of A (element (i,k) at a + i*rs + k*cs) into
// MR-row panels, zero-filling rows past mb.
template <typename T, typename S>
void pack_a(const S* a, int64_t rs, int64_t cs, int64_t mb, int64_t kb, T* ap) {
  constexpr int64_t MR = Blocking<T>::MR;
  for (int64_t p = 0; p < mb; p += MR) {
    for (int64_t kk = 0; kk < kb; ++kk) {
      for (int64_t r = 0; r < MR; ++r) {
        ap[kk * MR + r] = p + r < mb ? load_as<T>(a[(p + r) * rs + kk * cs]) : T(0);
      }
    }
    ap += kb * MR;
  }
}

template <typename T, typename S>
void pack_b(const S* b, int64_t rs, int64_t cs, int64_t kb, int64_t nb, T* bp) {
  constexpr int64_t NR = Blocking<T>::NR;
  for (int64_t p = 0; p < nb; p += NR) {
    for (int64_t kk = 0; kk < kb; ++kk) {
      const S* row = b + kk * rs;
      for (int64_t j = 0; j < NR; ++j) bp[kk * NR + j] = p + j < nb ? load_as<T>(row[(p + j) * cs]) : T(0);
    }
    bp += kb * NR;
  }
}

// One (row block, column block) tile of C: accumulates into `tile` (ldt columns).
template <typename T, typename S>
void gemm_tile(int64_t m0, int64_t mb, int64_t n0, int64_t nb, int64_t k, const S* a, int64_t a_rs, int64_t a_cs,
               const S* b, int64_t b_rs, int64_t b_cs, T* tile, int64_t ldt) {
  using B = Blocking<T>;
  thread_local std::vector<T> apack, bpack;
  apack.resize(static_cast<size_t>(B::MC * B::KC));
  bpack.resize(static_cast<size_t>(B::NC * B::KC));
  for (int64_t k0 = 0; k0 < k; k0 += B::KC) {
    const int64_t kb = std::min(B::KC, k - k0);
    pack_a<T, S>(a + m0 * a_rs + k0 * a_cs, a_rs, a_cs, mb, kb, apack.data());
    pack_b<T, S>(b + k0 * b_rs + n0 * b_cs, b_rs, b_cs, kb, nb, bpack.data());
    for (int64_t i = 0; i < mb; i += B::MR) {
      for (int64_t j = 0; j < nb; j += B::NR) {
        micro_kernel<T>(kb, apack.data() + i * kb, bpack.data() + j * kb, tile + i * ldt + j, ldt);
      }
    }
  }
}

template <typename T>
int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

// Single-threaded blocked GEMM into a row-major destination of T.
template <typename T>
void gemm_serial(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
                 int64_t b_cs, T* c, int64_t ldc, bool accumulate) {
  using B = Blocking<T>;
  if (!accumulate) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
  }
  if (k == 0) return;
  thread_local std::vector<T> tile;
  const int64_t ldt = round_up<T>(std::min(n, B::NC), B::NR);
  tile.resize(static_cast<size_t>(round_up<T>(B::MC, B::MR) * ldt));
  for (int64_t m0 = 0; m0 < m; m0 += B::MC) {
    const int64_t mb = std::min(B::MC, m - m0);
    for (int64_t n0 = 0; n0 < n; n0 += B::NC) {
      const int64_t nb = std::min(B::NC, n - n0);
      std::fill(tile.begin(), tile.end(), T(0));
      gemm_tile<T, T>(m0, mb, n0, nb, k, a, a_rs, a_cs, b, b_rs, b_cs, tile.data(), ldt);
      for (int64_t i = 0; i < mb; ++i) {
        T* dst = c + (m0 + i) * ldc + n0;
        const T* src = tile.data() + i * ldt;
        for (int64_t j = 0; j < nb; ++j) dst[j] += src[j];
      }
    }
  }
}

int64_t batch_offset(int batch_ndim, const int64_t* batch_shape, const int64_t* strides, int64_t index) {
  int64_t off = 0;
  for (int d = batch_ndim - 1; d >= 0; --d) {
    off += (index % batch_shape[d]) * strides[d];
    index /= batch_shape[d];
  }
  return off;
}

template <typename T, typename S>
void matmul_float(int batch_ndim, const int64_t* batch_shape, int64_t batches, int64_t m, int64_t n, int64_t k,
                  const MatrixOperand& a, const MatrixOperand& b, void* out, DType out_dtype) {
  using B = Blocking<T>;
  const int64_t mblocks = (m + B::MC - 1) / B::MC, nblocks = (n + B::NC - 1) / B::NC;
  const int64_t tasks = batches * mblocks * nblocks;
  const int64_t ldt = round_up<T>(std::min(n, B::NC), B::NR);
  parallel_for(0, tasks, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> tile(static_cast<size_t>(round_up<T>(B::MC, B::MR) * ldt));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bi = t / (mblocks * nblocks), mi = (t / nblocks) % mblocks, ni = t % nblocks;
      const int64_t m0 = mi * B::MC, n0 = ni * B::NC;
      const int64_t mb = std::min(B::MC, m - m0), nb = std::min(B::NC, n - n0);
      const S* pa = static_cast<const S*>(a.data) + a.offset + batch_offset(batch_ndim, batch_shape, a.batch_strides, bi);
      const S* pb = static_cast<const S*>(b.data) + b.offset + batch_offset(batch_ndim, batch_shape, b.batch_strides, bi);
      std::fill(tile.begin(), tile.end(), T(0));
      if (k > 0) gemm_tile<T, S>(m0, mb, n0, nb, k, pa, a.row_stride, a.col_stride, pb, b.row_stride, b.col_stride, tile.data(), ldt);
      NVHCQ_DISPATCH_DTYPE(out_dtype, O, {
        O* po = static_cast<O*>(out) + bi * m * n;
        for (int64_t i = 0; i < mb; ++i) {
          for (int64_t j = 0; j < nb; ++j) po[(m0 + i) * n + n0 + j] = store_as<O>(tile[i * ldt + j]);
        }
      });
    }
  });
}

template <typename S>
void matmul_int(int batch_ndim, const int64_t* batch_shape, int64_t batches, int64_t m, int64_t n, int64_t k,
                const MatrixOperand& a, const MatrixOperand& b, void* out, DType out_dtype) {
  parallel_for(0, batches * m, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n * k)), [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> row(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t bi = r / m, i = r % m;
      const S* pa = static_cast<const S*>(a.data) + a.offset + batch_offset(batch_ndim, batch_shape, a.batch_strides, bi) + i * a.row_stride;
      const S* pb = static_cast<const S*>(b.data) + b.offset + batch_offset(batch_ndim, batch_shape, b.batch_strides, bi);
      std::fill(row.begin(), row.end(), 0);
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t av = load_as<int64_t>(pa[kk * a.col_stride]);
        for (int64_t j = 0; j < n; ++j) {
          row[j] = static_cast<int64_t>(static_cast<uint64_t>(row[j]) +
                                        static_cast<uint64_t>(av) * static_cast<uint64_t>(load_as<int64_t>(pb[kk * b.row_stride + j * b.col_stride])));
        }
      }
      for (int64_t j = 0; j < n; ++j) write_from_int64(out, out_dtype, r * n + j, row[j]);
    }
  });
}

}  // namespace

void matmul(int batch_ndim, const int64_t* batch_shape, int64_t m, int64_t n, int64_t k, const MatrixOperand& a,
            const MatrixOperand& b, void* out, DType out_dtype) {
  if (a.dtype != b.dtype) throw Error("internal: matmul operands have different dtypes");
  if (a.dtype == DType::kBool) throw Error("matmul is not supported for dtype bool");
  if (batch_ndim > kMaxDims) throw Error("matmul: too many batch dimensions");
  int64_t batches = 1;
  for (int d = 0; d < batch_ndim; ++d) batches *= batch_shape[d];
  if (batches == 0 || m == 0 || n == 0) return;
  switch (a.dtype) {
    case DType::kF32: matmul_float<float, float>(batch_ndim, batch_shape, batches, m, n, k, a, b, out, out_dtype); return;
    case DType::kF16: matmul_float<float, Half>(batch_ndim, batch_shape, batches, m, n, k, a, b, out, out_dtype); return;
    case DType::kBF16: matmul_float<float, BFloat16>(batch_ndim, batch_shape, batches, m, n, k, a, b, out, out_dtype); return;
    case DType::kF64: matmul_float<double, double>(batch_ndim, batch_shape, batches, m, n, k, a, b, out, out_dtype); return;
    default:
      NVHCQ_DISPATCH_DTYPE(a.dtype, S, matmul_int<S>(batch_ndim, batch_shape, batches, m, n, k, a, b, out, out_dtype));
      return;
  }
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
              int64_t b_rs, int64_t b_cs, float* c, int64_t ldc, bool accumulate) {
  gemm_serial<float>(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, accumulate);
}

void gemm_f64(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs, const double* b,
              int64_t b_rs, int64_t b_cs, double* c, int64_t ldc, bool accumulate) {
  gemm_serial<double>(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, accumulate);
}

}  // namespace nvhcq::cpu
