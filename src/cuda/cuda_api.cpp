#include "cuda/cuda_api.h"

#include "base/dynlib.h"
#include "base/error.h"

namespace nvhcq::cuda {
namespace {

CudaApi load() {
  DynLib lib = DynLib::open("the CUDA driver library (libcuda.so.1)",
                            {"libcuda.so.1", "libcuda.so"}, cuda_library_dirs());
  CudaApi api{};
  lib.bind(api.cuInit, "cuInit");
  lib.bind(api.cuDriverGetVersion, "cuDriverGetVersion");
  lib.bind(api.cuGetErrorName, "cuGetErrorName");
  lib.bind(api.cuGetErrorString, "cuGetErrorString");
  lib.bind(api.cuDeviceGetCount, "cuDeviceGetCount");
  lib.bind(api.cuDeviceGet, "cuDeviceGet");
  lib.bind(api.cuDeviceGetName, "cuDeviceGetName");
  lib.bind(api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  lib.bind(api.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  lib.bind(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  lib.bind(api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  lib.bind(api.cuCtxSetCurrent, "cuCtxSetCurrent");
  lib.bind(api.cuCtxSynchronize, "cuCtxSynchronize");
  lib.bind(api.cuMemGetInfo, "cuMemGetInfo_v2");
  lib.bind(api.cuModuleLoadData, "cuModuleLoadData");
  lib.bind(api.cuModuleUnload, "cuModuleUnload");
  lib.bind(api.cuModuleGetFunction, "cuModuleGetFunction");
  lib.bind(api.cuFuncSetAttribute, "cuFuncSetAttribute");
  lib.bind(api.cuFuncGetAttribute, "cuFuncGetAttribute");
  lib.bind(api.cuLaunchKernel, "cuLaunchKernel");
  lib.bind(api.cuMemAlloc, "cuMemAlloc_v2");
  lib.bind(api.cuMemFree, "cuMemFree_v2");
  lib.bind(api.cuMemAllocHost, "cuMemAllocHost_v2");
  lib.bind(api.cuMemFreeHost, "cuMemFreeHost");
  lib.bind(api.cuMemHostRegister, "cuMemHostRegister_v2");
  lib.bind(api.cuMemHostUnregister, "cuMemHostUnregister");
  lib.bind(api.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  lib.bind(api.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  lib.bind(api.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  lib.bind(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  lib.bind(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  lib.bind(api.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  lib.bind(api.cuMemcpyAsync, "cuMemcpyAsync");
  lib.bind(api.cuMemsetD8Async, "cuMemsetD8Async");
  lib.bind(api.cuMemsetD32Async, "cuMemsetD32Async");
  lib.bind(api.cuStreamCreate, "cuStreamCreate");
  lib.bind(api.cuStreamDestroy, "cuStreamDestroy_v2");
  lib.bind(api.cuStreamSynchronize, "cuStreamSynchronize");
  lib.bind(api.cuStreamQuery, "cuStreamQuery");
  lib.bind(api.cuStreamWaitEvent, "cuStreamWaitEvent");
  lib.bind(api.cuEventCreate, "cuEventCreate");
  lib.bind(api.cuEventDestroy, "cuEventDestroy_v2");
  lib.bind(api.cuEventRecord, "cuEventRecord");
  lib.bind(api.cuEventSynchronize, "cuEventSynchronize");
  lib.bind(api.cuEventQuery, "cuEventQuery");
  lib.bind(api.cuEventElapsedTime, "cuEventElapsedTime");
  lib.bind(api.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  lib.bind(api.cuStreamEndCapture, "cuStreamEndCapture");
  lib.bind(api.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  lib.bind(api.cuGraphLaunch, "cuGraphLaunch");
  lib.bind(api.cuGraphExecDestroy, "cuGraphExecDestroy");
  lib.bind(api.cuGraphDestroy, "cuGraphDestroy");
  api.path = lib.path();
  CUresult rc = api.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    const char* name = nullptr;
    api.cuGetErrorName(rc, &name);
    throw Error(std::string("cuInit failed: ") + (name ? name : "unknown error"), "cuInit", rc,
                "is an NVIDIA GPU present and its driver loaded?");
  }
  api.cuDriverGetVersion(&api.driver_version);
  return api;
}

}  // namespace

const CudaApi& cuda() {
  return LoadedOnce<CudaApi, load>::get();
}

bool cuda_available() {
  return LoadedOnce<CudaApi, load>::available();
}

void check(CUresult rc, const char* what) {
  if (rc == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  const CudaApi& api = cuda();
  api.cuGetErrorName(rc, &name);
  api.cuGetErrorString(rc, &text);
  throw Error(std::string(what) + ": " + (name ? name : "CUDA error") + ": " + (text ? text : ""),
              what, rc);
}

}  // namespace nvhcq::cuda
