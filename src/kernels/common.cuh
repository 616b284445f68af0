// Shared helpers for nvhcq's CUDA C kernels. NVRTC compiles these without any
// CUDA toolkit header, so half/bfloat16 conversions are written with PTX here.
#pragma once

typedef unsigned short nv_half_bits;
typedef unsigned short nv_bf16_bits;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef short int16_t;

__device__ __forceinline__ float half_to_float(nv_half_bits h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

__device__ __forceinline__ nv_half_bits float_to_half(float f) {
  nv_half_bits h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

__device__ __forceinline__ float bf16_to_float(nv_bf16_bits b) {
  return __uint_as_float(((unsigned)b) << 16);
}

__device__ __forceinline__ nv_bf16_bits float_to_bf16(float f) {
  // Round to nearest even; NaN stays NaN.
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (nv_bf16_bits)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (nv_bf16_bits)(u >> 16);
}
