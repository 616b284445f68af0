#pragma once
// The CUDA driver-API entry points nvhcq uses, declared here so that no CUDA
// header is needed to build. libcuda.so.1 is loaded at run time. Only the
// reference backend (cuda/) and diagnostics use it; the nv path never does.

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvhcq::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// Device attributes (CUdevice_attribute values from the driver API).
enum : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// Function attributes (CUfunction_attribute).
enum : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
};

enum : unsigned {
  CU_STREAM_NON_BLOCKING = 0x1,
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_DISABLE_TIMING = 0x2,
  CU_MEMHOSTALLOC_PORTABLE = 0x1,
  CU_MEMHOSTREGISTER_PORTABLE = 0x1,
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

struct CudaApi {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int ordinal);
  CUresult (*cuDeviceGetName)(char*, int len, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int attr, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);  // cuDeviceTotalMem_v2
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);  // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemGetInfo)(size_t* free_bytes, size_t* total_bytes);  // _v2
  CUresult (*cuModuleLoadData)(CUmodule*, const void* image);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char* name);
  CUresult (*cuFuncSetAttribute)(CUfunction, int attr, int value);
  CUresult (*cuFuncGetAttribute)(int*, int attr, CUfunction);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shared_bytes, CUstream,
                             void** params, void** extra);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);  // _v2
  CUresult (*cuMemFree)(CUdeviceptr);            // _v2
  CUresult (*cuMemAllocHost)(void**, size_t);    // _v2
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuMemHostRegister)(void*, size_t, unsigned flags);  // _v2
  CUresult (*cuMemHostUnregister)(void*);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);                       // _v2
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);                             // _v2
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);                       // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);        // _v2
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);              // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);        // _v2
  CUresult (*cuMemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t, CUstream);  // unified addressing
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream);  // _v2
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned flags);
  CUresult (*cuEventCreate)(CUevent*, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent);  // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end);
  CUresult (*cuStreamBeginCapture)(CUstream, int mode);  // _v2
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);

  std::string path;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
};

// Loads libcuda.so.1 and calls cuInit(0) once; throws Error when it is absent or
// cuInit fails (no GPU, driver mismatch), with the CUDA error name.
const CudaApi& cuda();
// True when libcuda loads and cuInit succeeds; never throws.
bool cuda_available();
// Throws Error("<what>: <CUDA error name>: <text>") when `rc` is not CUDA_SUCCESS.
void check(CUresult rc, const char* what);

}  // namespace nvhcq::cuda
