#pragma once
// cuBLAS, loaded at run time (libcublas.so.*) and used only to measure: the
// ceiling bench_matmul compares nvhcq's GEMM kernels against. The few entry
// points used are declared here, so no CUDA header or library is needed to
// build. cuBLAS runs on the CUDA driver API's primary context (the one the
// "cuda" backend uses) and on a stream the caller gives it.

#include <string>

#include "cuda/cuda_api.h"

namespace nvhcq::cuda {

using cublasHandle_t = struct cublasContext*;
using cublasStatus_t = int;

enum : int {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_GEMM_DEFAULT = -1,
  CUBLAS_COMPUTE_32F = 68,
};

// cudaDataType values.
enum : int {
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14,
};

struct CublasApi {
  cublasStatus_t (*cublasCreate_v2)(cublasHandle_t*);
  cublasStatus_t (*cublasDestroy_v2)(cublasHandle_t);
  cublasStatus_t (*cublasGetVersion_v2)(cublasHandle_t, int* version);
  cublasStatus_t (*cublasSetStream_v2)(cublasHandle_t, CUstream);
  cublasStatus_t (*cublasSgemm_v2)(cublasHandle_t, int transa, int transb, int m, int n, int k,
                                   const float* alpha, const float* A, int lda, const float* B,
                                   int ldb, const float* beta, float* C, int ldc);
  cublasStatus_t (*cublasGemmEx)(cublasHandle_t, int transa, int transb, int m, int n, int k,
                                 const void* alpha, const void* A, int a_type, int lda,
                                 const void* B, int b_type, int ldb, const void* beta, void* C,
                                 int c_type, int ldc, int compute_type, int algo);
  std::string path;
};

// Loads libcublas once (CUDA_HOME, /usr/local/cuda*, the loader's path); throws
// Error naming the places searched when it is absent.
const CublasApi& cublas();
bool cublas_available();
// Throws Error("<what>: cuBLAS status N (NAME)") unless `status` is success.
void check_cublas(cublasStatus_t status, const char* what);

// Element types of a row-major GEMM through cuBLAS.
enum class CublasGemmType { kF32, kF16, kBF16 };

// One cuBLAS handle bound to the current device's primary context and a
// stream of its own: row-major C (M x N) = A (M x K) * B (K x N), f32
// accumulate, C in the input type (the same contract as nvhcq's GEMM kernels).
class CublasGemm {
 public:
  explicit CublasGemm(int device_index = 0);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // Queues one product on the stream. Pointers are device addresses.
  void gemm(CublasGemmType type, CUdeviceptr c, CUdeviceptr a, CUdeviceptr b, int m, int n, int k);
  void synchronize();
  // GPU time of `reps` products queued back to back, in milliseconds per product.
  double time_ms(CublasGemmType type, CUdeviceptr c, CUdeviceptr a, CUdeviceptr b, int m, int n,
                 int k, int reps);
  int version() const { return version_; }

 private:
  const CublasApi& api_;
  const CudaApi& cu_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  int version_ = 0;
};

}  // namespace nvhcq::cuda
