// The blocked GEMM and the reduction kernel against naive float64 loops, on sizes
// that cross every blocking boundary and on the parallel split path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/matmul.h"
#include "cpu/reduce.h"
#include "cpu/strided.h"

namespace nvhcq::cpu {
namespace {

void check_gemm(int64_t m, int64_t n, int64_t k, bool transpose_a) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 17 + k));
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(k * n), c(m * n, NAN);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  MatrixOperand ma, mb;
  ma.data = a.data();
  ma.row_stride = transpose_a ? 1 : k;  // transposed: a holds A^T row-major
  ma.col_stride = transpose_a ? m : 1;
  mb.data = b.data();
  mb.row_stride = n;
  mb.col_stride = 1;
  matmul(0, nullptr, m, n, k, ma, mb, c.data(), DType::kF32);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = transpose_a ? a[p * m + i] : a[i * k + p];
        ref += x * b[p * n + j];
        mag += std::fabs(x * b[p * n + j]);
      }
      ASSERT_NEAR(c[i * n + j], ref, 1e-5 * (mag + 1)) << m << "x" << n << "x" << k << " at " << i << "," << j;
    }
  }
}

TEST(Matmul, SizesAcrossBlockBoundaries) {
  for (int64_t m : {1, 5, 6, 7, 73, 150})
    for (int64_t n : {1, 15, 16, 17, 257})
      for (int64_t k : {1, 3, 255, 256, 300}) check_gemm(m, n, k, (m + n + k) % 2 == 0);
}

TEST(Matmul, BatchBroadcastThroughZeroStrides) {
  // a: [2, 1] batches of 3x4 (batch axis 1 broadcast), b: one 4x2 for all batches.
  const int64_t batch[2] = {2, 3};
  std::vector<double> a(2 * 3 * 4), b(4 * 2), c(2 * 3 * 3 * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i) * 0.5;
  const int64_t sa[2] = {12, 0}, sb[2] = {0, 0};
  MatrixOperand ma, mb;
  ma.data = a.data();
  ma.dtype = mb.dtype = DType::kF64;
  ma.row_stride = 4;
  ma.col_stride = 1;
  ma.batch_strides = sa;
  mb.data = b.data();
  mb.row_stride = 2;
  mb.col_stride = 1;
  mb.batch_strides = sb;
  matmul(2, batch, 3, 2, 4, ma, mb, c.data(), DType::kF64);
  for (int64_t b0 = 0; b0 < 2; ++b0)
    for (int64_t b1 = 0; b1 < 3; ++b1)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double ref = 0;
          for (int64_t p = 0; p < 4; ++p) ref += a[b0 * 12 + i * 4 + p] * b[p * 2 + j];
          EXPECT_DOUBLE_EQ(c[((b0 * 3 + b1) * 3 + i) * 2 + j], ref);
        }
}

TEST(Reduce, SplitPathMatchesDoubleSum) {
  const int64_t n = (1 << 20) + 3;
  std::vector<float> x(n);
  double ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(std::sin(static_cast<double>(i)));
    ref += x[i];
  }
  const int64_t shape[1] = {n}, st[1] = {1};
  const bool axes[1] = {true};
  StridedOperand in;
  in.data = x.data();
  in.strides = st;
  double out = 0;
  reduce(ReduceOp::kSum, 1, shape, axes, in, &out, DType::kF64);
  EXPECT_NEAR(out, ref, 1e-9 * n);
  // argmax across chunk boundaries: equal maxima, the first wins.
  x[70000] = 5;
  x[20000] = 5;
  x[900000] = 5;
  int64_t arg = -1;
  reduce(ReduceOp::kArgMax, 1, shape, axes, in, &arg, DType::kI64);
  EXPECT_EQ(arg, 20000);
  float mx = 0;
  x[500000] = NAN;
  reduce(ReduceOp::kMax, 1, shape, axes, in, &mx, DType::kF32);
  EXPECT_TRUE(std::isnan(mx));
}

TEST(Reduce, NonInnermostAxesAndStrides) {
  // Sum over axes 0 and 2 of a 4x3x5 tensor read transposed (strides of a 5x3x4 buffer).
  std::vector<int32_t> buf(60);
  for (int i = 0; i < 60; ++i) buf[i] = i * 7 % 11;
  const int64_t shape[3] = {4, 3, 5}, st[3] = {1, 4, 12};
  const bool axes[3] = {true, false, true};
  StridedOperand in;
  in.data = buf.data();
  in.dtype = DType::kI32;
  in.strides = st;
  std::vector<int64_t> out(3, -1);
  reduce(ReduceOp::kSum, 3, shape, axes, in, out.data(), DType::kI64);
  for (int j = 0; j < 3; ++j) {
    int64_t ref = 0;
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 5; ++k) ref += buf[i * 1 + j * 4 + k * 12];
    EXPECT_EQ(out[j], ref);
  }
}

}  // namespace
}  // namespace nvhcq::cpu
