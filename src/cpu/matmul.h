#pragma once
// Batched matrix multiplication on the CPU: packed panels, a register-blocked
// micro-kernel (AVX2+FMA where the build targets it, portable C++ otherwise) and
// the default thread pool over (batch, row block, column block) tiles.
// f16, bf16 and f32 compute in f32; f64 in f64; integer types in int64 (wrapping).

#include <cstdint>

#include "cpu/dtype.h"

namespace nvhcq::cpu {

// One [rows, cols] matrix per batch index: element (b..., r, c) lives at
// offset + sum(b_i * batch_strides[i]) + r * row_stride + c * col_stride.
struct MatrixOperand {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t offset = 0;
  int64_t row_stride = 0, col_stride = 0;
  const int64_t* batch_strides = nullptr;
};

// out[b..., i, j] = sum_k a[b..., i, k] * b[b..., k, j]. `a` and `b` share a dtype
// (not bool); `out` is contiguous [batch_shape..., m, n] of out_dtype.
void matmul(int batch_ndim, const int64_t* batch_shape, int64_t m, int64_t n, int64_t k, const MatrixOperand& a,
            const MatrixOperand& b, void* out, DType out_dtype);

// Single-threaded f32 GEMM for other kernels (conv): c[i*ldc + j] (+)= sum_k a(i,k) b(k,j)
// with a(i,k) = a[i*a_rs + k*a_cs] and b(k,j) = b[k*b_rs + j*b_cs].
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
              int64_t b_rs, int64_t b_cs, float* c, int64_t ldc, bool accumulate);
void gemm_f64(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs, const double* b,
              int64_t b_rs, int64_t b_cs, double* c, int64_t ldc, bool accumulate);

}  // namespace nvhcq::cpu
