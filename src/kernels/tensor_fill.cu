// Fills device memory with a 32-bit pattern: the tensor backends poison new
// buffers with it in the tests (NVHCQ_POISON_BUFFERS=1).
#include "tensor_common.cuh"

extern "C" __global__ void __launch_bounds__(256)
    nvt_fill_u32(unsigned* dst, unsigned value, unsigned long long count) {
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    dst[i] = value;
  }
}
