#pragma once
// Which SIMD kernels of the quant layer this CPU can run. The AVX2 kernels are
// compiled with a per-function target attribute, so they build even when the
// project is compiled for plain x86-64, and are only called after this check.

#if defined(__x86_64__)
#define NVHCQ_QUANT_HAVE_X86 1
#define NVHCQ_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#else
#define NVHCQ_QUANT_HAVE_X86 0
#define NVHCQ_TARGET_AVX2
#endif

namespace nvhcq::llm {

// True when the CPU has AVX2, FMA and F16C (x86-64-v3), and NVHCQ_QUANT_SCALAR is
// not set to a nonzero value in the environment (a switch for benchmarks and debugging).
bool quant_avx2_enabled();

}  // namespace nvhcq::llm
