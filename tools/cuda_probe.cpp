// Launches one kernel through the CUDA driver API: the reference run for the
// ioctl tracer (what libcuda does to set up a channel and launch on this GPU).
//   tool_cuda_probe [selftest.cubin]

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "compile/compiler.h"
#include "cuda/cuda_api.h"

using namespace nvhcq::cuda;

int main(int argc, char** argv) {
  try {
    const CudaApi& api = cuda();
    CUdevice dev;
    check(api.cuDeviceGet(&dev, 0), "cuDeviceGet");
    CUcontext ctx;
    check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    int major = 0, minor = 0;
    api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    std::vector<uint8_t> cubin;
    if (argc > 1) {
      std::ifstream in(argv[1], std::ios::binary);
      cubin.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else {
      nvhcq::compile::CompileOptions o;
      o.arch = "sm_" + std::to_string(major) + std::to_string(minor);
      cubin = nvhcq::compile::compile_embedded("selftest.cu", o).cubin;
    }
    CUmodule mod;
    check(api.cuModuleLoadData(&mod, cubin.data()), "cuModuleLoadData");
    CUfunction fn;
    check(api.cuModuleGetFunction(&fn, mod, "affine_fill"), "cuModuleGetFunction");
    const unsigned n = 1000;
    CUdeviceptr out;
    check(api.cuMemAlloc(&out, n * 4), "cuMemAlloc");
    float a = 2.0f, b = 1.0f;
    unsigned count = n;
    void* params[] = {&out, &a, &b, &count};
    check(api.cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr),
          "cuLaunchKernel");
    check(api.cuCtxSynchronize(), "cuCtxSynchronize");
    std::vector<float> host(n);
    check(api.cuMemcpyDtoH(host.data(), out, n * 4), "cuMemcpyDtoH");
    std::printf("cuda probe: sm_%d%d, out[999] = %.1f (expect 1999.0)\n", major, minor, host[999]);
    return host[999] == 1999.0f ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda probe failed: %s\n", e.what());
    return 1;
  }
}
