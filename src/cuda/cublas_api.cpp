#include "cuda/cublas_api.h"

#include "base/dynlib.h"
#include "base/error.h"

namespace nvhcq::cuda {
namespace {

CublasApi load() {
  // libcublas finds its libcublasLt sibling through its own RUNPATH ($ORIGIN).
  DynLib lib =
      DynLib::open("cuBLAS (libcublas.so)",
                   {"libcublas.so.13", "libcublas.so.12", "libcublas.so.*", "libcublas.so"},
                   cuda_library_dirs());
  CublasApi api{};
  lib.bind(api.cublasCreate_v2, "cublasCreate_v2");
  lib.bind(api.cublasDestroy_v2, "cublasDestroy_v2");
  lib.bind(api.cublasGetVersion_v2, "cublasGetVersion_v2");
  lib.bind(api.cublasSetStream_v2, "cublasSetStream_v2");
  lib.bind(api.cublasSgemm_v2, "cublasSgemm_v2");
  lib.bind(api.cublasGemmEx, "cublasGemmEx");
  api.path = lib.path();
  return api;
}

const char* status_name(cublasStatus_t s) {
  switch (s) {
    case 0:
      return "SUCCESS";
    case 1:
      return "NOT_INITIALIZED";
    case 3:
      return "ALLOC_FAILED";
    case 7:
      return "INVALID_VALUE";
    case 8:
      return "ARCH_MISMATCH";
    case 11:
      return "MAPPING_ERROR";
    case 13:
      return "EXECUTION_FAILED";
    case 14:
      return "INTERNAL_ERROR";
    case 15:
      return "NOT_SUPPORTED";
    case 16:
      return "LICENSE_ERROR";
    default:
      return "unknown";
  }
}

}  // namespace

const CublasApi& cublas() {
  return LoadedOnce<CublasApi, load>::get();
}

bool cublas_available() {
  return LoadedOnce<CublasApi, load>::available();
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string(what) + ": cuBLAS status " + std::to_string(status) + " (" +
                  status_name(status) + ")",
              what, status);
}

CublasGemm::CublasGemm(int device_index) : api_(cublas()), cu_(cuda()) {
  check(cu_.cuDeviceGet(&device_, device_index), "cuDeviceGet");
  check(cu_.cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
  check(cu_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  check(cu_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cu_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cu_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cublas(api_.cublasCreate_v2(&handle_), "cublasCreate");
  check_cublas(api_.cublasSetStream_v2(handle_, stream_), "cublasSetStream");
  api_.cublasGetVersion_v2(handle_, &version_);
}

CublasGemm::~CublasGemm() {
  cu_.cuCtxSetCurrent(ctx_);
  if (stream_ != nullptr) cu_.cuStreamSynchronize(stream_);
  if (handle_ != nullptr) api_.cublasDestroy_v2(handle_);
  if (start_ != nullptr) cu_.cuEventDestroy(start_);
  if (stop_ != nullptr) cu_.cuEventDestroy(stop_);
  if (stream_ != nullptr) cu_.cuStreamDestroy(stream_);
  cu_.cuDevicePrimaryCtxRelease(device_);
}

void CublasGemm::gemm(CublasGemmType type, CUdeviceptr c, CUdeviceptr a, CUdeviceptr b, int m,
                      int n, int k) {
  cu_.cuCtxSetCurrent(ctx_);
  // cuBLAS is column-major: a row-major M x N matrix is its N x M transpose, so
  // row-major C = A * B is column-major C^T = B^T * A^T, with B first.
  const float one = 1.0f, zero = 0.0f;
  auto* pa = reinterpret_cast<const void*>(a);
  auto* pb = reinterpret_cast<const void*>(b);
  auto* pc = reinterpret_cast<void*>(c);
  if (type == CublasGemmType::kF32) {
    check_cublas(
        api_.cublasSgemm_v2(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                            static_cast<const float*>(pb), n, static_cast<const float*>(pa), k,
                            &zero, static_cast<float*>(pc), n),
        "cublasSgemm");
    return;
  }
  int dt = type == CublasGemmType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
  check_cublas(api_.cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, pb, dt, n, pa,
                                 dt, k, &zero, pc, dt, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

void CublasGemm::synchronize() {
  cu_.cuCtxSetCurrent(ctx_);
  check(cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

double CublasGemm::time_ms(CublasGemmType type, CUdeviceptr c, CUdeviceptr a, CUdeviceptr b, int m,
                           int n, int k, int reps) {
  cu_.cuCtxSetCurrent(ctx_);
  check(cu_.cuEventRecord(start_, stream_), "cuEventRecord");
  for (int i = 0; i < reps; ++i) gemm(type, c, a, b, m, n, k);
  check(cu_.cuEventRecord(stop_, stream_), "cuEventRecord");
  check(cu_.cuEventSynchronize(stop_), "cuEventSynchronize");
  float ms = 0;
  check(cu_.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
  return ms / reps;
}

}  // namespace nvhcq::cuda
