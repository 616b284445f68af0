// Helpers shared by the tensor layer's generated (fused) kernels and its library
// kernels (tensor_*.cu). They define, on the GPU, exactly what src/cpu/element.h
// and src/cpu/scalar_ops.h define on the CPU: storage <-> compute conversions
// (f16/bf16 round to nearest even once, float -> integer saturates with NaN -> 0,
// integers wrap), and the scalar ops (NaN-propagating max/min, Python mod,
// integer pow and shifts that never trap).
//
// Compute types: float for f16/bf16/f32, long long for integers and bool.
//
// Compiled by NVRTC without any toolkit header; the same text also compiles as
// host C++ under the tensor tests' kernel emulator (NVHCQ_EMU, which supplies the
// CUDA keywords), so every __CUDA_ARCH__ branch has a portable twin.
#pragma once

#define NVT_FN __device__ __forceinline__

typedef long long nvt_i64;
typedef unsigned long long nvt_u64;

#ifndef NVHCQ_EMU
#define NVT_INF (__int_as_float(0x7f800000))
#else
#define NVT_INF (__builtin_huge_valf())
#endif

// ---- bit casts -------------------------------------------------------------------

NVT_FN unsigned nvt_float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  unsigned u;
  __builtin_memcpy(&u, &f, 4);
  return u;
#endif
}

NVT_FN float nvt_bits_float(unsigned u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

// ---- f16 / bf16 ------------------------------------------------------------------

NVT_FN float nvt_h2f(unsigned short h) {
#ifdef __CUDA_ARCH__
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  unsigned sign = (unsigned)(h & 0x8000u) << 16;
  unsigned exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = (float)mant * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return nvt_bits_float(sign | 0x7f800000u | (mant << 13));
  return nvt_bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
#endif
}

NVT_FN unsigned short nvt_f2h(float f) {
#ifdef __CUDA_ARCH__
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  unsigned x = nvt_float_bits(f);
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)
    return (unsigned short)(sign | 0x7c00u |
                            (x > 0x7f800000u ? 0x200u | ((x >> 13) & 0x3ffu) : 0u));
  if (x >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  if (x < 0x38800000u) {
    float units = nvt_bits_float(x) * 16777216.0f;  // subnormal: units of 2^-24, ties to even
    return (unsigned short)(sign | (unsigned short)__builtin_nearbyintf(units));
  }
  x += 0xfffu + ((x >> 13) & 1u);
  x -= 112u << 23;
  return (unsigned short)(sign | (x >> 13));
#endif
}

NVT_FN float nvt_bf2f(unsigned short b) {
  return nvt_bits_float(((unsigned)b) << 16);
}

NVT_FN unsigned short nvt_f2bf(float f) {
  unsigned x = nvt_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}

// double -> float rounded to odd (truncate, set the last bit when inexact): a
// second rounding to f16/bf16 is then correct (no double rounding).
NVT_FN float nvt_double_to_float_odd(double d) {
  if (d != d) return (float)d;
#ifdef __CUDA_ARCH__
  float f = __double2float_rz(d);
#else
  float f = (float)d;
  if ((double)f != d && __builtin_fabs((double)f) > __builtin_fabs(d))
    f = nvt_bits_float(nvt_float_bits(f) - 1u);
#endif
  if ((double)f == d) return f;
  return nvt_bits_float(nvt_float_bits(f) | 1u);
}

// ---- conversions between compute values and storage ------------------------------

NVT_FN nvt_i64 nvt_saturate(double d, double lo, double hi, nvt_i64 lo_i, nvt_i64 hi_i) {
  if (d != d) return 0;
  if (d <= lo) return lo_i;
  if (d >= hi) return hi_i;
  return (nvt_i64)d;
}

// A float compute value stored into an integer type (truncate, saturate, NaN -> 0).
NVT_FN nvt_i64 nvt_f2i8(double d) {
  return nvt_saturate(d, -128.0, 127.0, -128, 127);
}
NVT_FN nvt_i64 nvt_f2u8(double d) {
  return nvt_saturate(d, 0.0, 255.0, 0, 255);
}
NVT_FN nvt_i64 nvt_f2i16(double d) {
  return nvt_saturate(d, -32768.0, 32767.0, -32768, 32767);
}
NVT_FN nvt_i64 nvt_f2i32(double d) {
  return nvt_saturate(d, -2147483648.0, 2147483647.0, -2147483647ll - 1, 2147483647ll);
}
NVT_FN nvt_i64 nvt_f2i64(double d) {
  return nvt_saturate(d, -9223372036854775808.0, 9223372036854775807.0,
                      (nvt_i64)(-9223372036854775807ll - 1), 9223372036854775807ll);
}

// An integer compute value stored into a narrower float: rounded once.
NVT_FN unsigned short nvt_i2h(nvt_i64 v) {
  return nvt_f2h(nvt_double_to_float_odd((double)v));
}
NVT_FN unsigned short nvt_i2bf(nvt_i64 v) {
  return nvt_f2bf(nvt_double_to_float_odd((double)v));
}
NVT_FN float nvt_i2f(nvt_i64 v) {
  return (float)v;
}

// Narrowing integer wraps (two's complement).
NVT_FN nvt_i64 nvt_wrap_i8(nvt_i64 v) {
  return (nvt_i64)(signed char)(unsigned char)(nvt_u64)v;
}
NVT_FN nvt_i64 nvt_wrap_u8(nvt_i64 v) {
  return (nvt_i64)(unsigned char)(nvt_u64)v;
}
NVT_FN nvt_i64 nvt_wrap_i16(nvt_i64 v) {
  return (nvt_i64)(short)(unsigned short)(nvt_u64)v;
}
NVT_FN nvt_i64 nvt_wrap_i32(nvt_i64 v) {
  return (nvt_i64)(int)(unsigned)(nvt_u64)v;
}

// ---- scalar ops (cpu/scalar_ops.h) ------------------------------------------------

NVT_FN nvt_i64 nvt_add(nvt_i64 a, nvt_i64 b) {
  return (nvt_i64)((nvt_u64)a + (nvt_u64)b);
}
NVT_FN nvt_i64 nvt_sub(nvt_i64 a, nvt_i64 b) {
  return (nvt_i64)((nvt_u64)a - (nvt_u64)b);
}
NVT_FN nvt_i64 nvt_mul(nvt_i64 a, nvt_i64 b) {
  return (nvt_i64)((nvt_u64)a * (nvt_u64)b);
}
NVT_FN nvt_i64 nvt_neg(nvt_i64 a) {
  return (nvt_i64)(0ull - (nvt_u64)a);
}
NVT_FN nvt_i64 nvt_abs(nvt_i64 a) {
  return a < 0 ? nvt_neg(a) : a;
}

// NaN-propagating maximum/minimum (the first NaN operand on the CPU; some NaN
// here). One instruction from sm_80 on.
NVT_FN float nvt_max(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
#endif
}
NVT_FN float nvt_min(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
#endif
}
NVT_FN nvt_i64 nvt_max(nvt_i64 a, nvt_i64 b) {
  return a > b ? a : b;
}
NVT_FN nvt_i64 nvt_min(nvt_i64 a, nvt_i64 b) {
  return a < b ? a : b;
}

NVT_FN nvt_i64 nvt_mod(nvt_i64 a, nvt_i64 b) {
  if (b == 0 || b == -1) return 0;
  nvt_i64 r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
NVT_FN float nvt_mod(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

NVT_FN nvt_i64 nvt_pow(nvt_i64 a, nvt_i64 b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  nvt_i64 result = 1, base = a;
  nvt_u64 e = (nvt_u64)b;
  while (e) {
    if (e & 1) result = nvt_mul(result, base);
    base = nvt_mul(base, base);
    e >>= 1;
  }
  return result;
}

NVT_FN nvt_i64 nvt_shl(nvt_i64 a, nvt_i64 b) {
  if (b < 0 || b >= 64) return 0;
  return (nvt_i64)((nvt_u64)a << b);
}
NVT_FN nvt_i64 nvt_shr(nvt_i64 a, nvt_i64 b) {
  if (b < 0 || b >= 64) return a < 0 ? -1 : 0;
  return a >> b;
}

NVT_FN float nvt_sign(float a) {
  if (a != a) return a;
  return (float)((a > 0) - (a < 0));
}
NVT_FN nvt_i64 nvt_sign(nvt_i64 a) {
  return (nvt_i64)((a > 0) - (a < 0));
}

NVT_FN float nvt_sigmoid(float a) {
  return 1.0f / (1.0f + expf(-a));
}
NVT_FN float nvt_rsqrt(float a) {
  return 1.0f / sqrtf(a);
}
NVT_FN bool nvt_isinf(float a) {
  return a == NVT_INF || a == -NVT_INF;
}

// ---- vectorized access -----------------------------------------------------------

// `N` elements of storage type T read or written as one aligned access. Aligned
// like the access, so the vector stays valid should it ever live in local memory.
template <typename T, int N>
struct alignas(sizeof(T) * N >= 16 ? 16 : sizeof(T) * N) nvt_vec {
  T v[N];
};

template <typename T, int N>
NVT_FN nvt_vec<T, N> nvt_load_vec(const T* p) {
  nvt_vec<T, N> r;
  if (sizeof(T) * N == 16) {
    *(uint4*)r.v = *(const uint4*)p;
  } else if (sizeof(T) * N == 8) {
    *(uint2*)r.v = *(const uint2*)p;
  } else if (sizeof(T) * N == 4) {
    *(unsigned*)r.v = *(const unsigned*)p;
  } else if (sizeof(T) * N == 32) {
    ((uint4*)r.v)[0] = ((const uint4*)p)[0];
    ((uint4*)r.v)[1] = ((const uint4*)p)[1];
  } else {
    for (int i = 0; i < N; ++i) r.v[i] = p[i];
  }
  return r;
}

template <typename T, int N>
NVT_FN void nvt_store_vec(T* p, const nvt_vec<T, N>& r) {
  if (sizeof(T) * N == 16) {
    *(uint4*)p = *(const uint4*)r.v;
  } else if (sizeof(T) * N == 8) {
    *(uint2*)p = *(const uint2*)r.v;
  } else if (sizeof(T) * N == 4) {
    *(unsigned*)p = *(const unsigned*)r.v;
  } else if (sizeof(T) * N == 32) {
    ((uint4*)p)[0] = ((const uint4*)r.v)[0];
    ((uint4*)p)[1] = ((const uint4*)r.v)[1];
  } else {
    for (int i = 0; i < N; ++i) p[i] = r.v[i];
  }
}

// ---- warp and block reductions -----------------------------------------------------

template <typename T>
NVT_FN T nvt_shfl_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

// Data-dependent errors (an index out of range) are recorded in a flag word the
// backend reads back with the next download.
NVT_FN void nvt_raise(unsigned* flag, unsigned code) {
  if (flag) *flag = code;
}

// argmax/argmin state: the extreme value and its position; position < 0 means
// none yet. NaN counts as the extreme, and among equals the lowest position wins,
// so the merge is commutative and associative (any reduction order gives the
// CPU's "first extreme" answer).
template <bool kMax, typename T>
NVT_FN void nvt_arg_update(T& best, nvt_i64& best_i, T v, nvt_i64 i) {
  if (i < 0) return;
  if (best_i < 0) {
    best = v;
    best_i = i;
    return;
  }
  const bool bn = best != best, vn = v != v;
  if (bn || vn) {
    if ((vn && !bn) || (vn && bn && i < best_i)) {
      best = v;
      best_i = i;
    }
    return;
  }
  if (kMax ? v > best : v < best) {
    best = v;
    best_i = i;
  } else if (v == best && i < best_i) {
    best_i = i;
  }
}

// ---- storage traits for the library kernels ---------------------------------------
// S: storage type; C: compute type; load/store convert with the rules above;
// mac(acc, a, b) = acc + a * b (wrapping for integers).

#define NVT_INT_TRAITS(NAME, STORAGE)                                            \
  struct NAME {                                                                  \
    typedef STORAGE S;                                                           \
    typedef long long C;                                                         \
    static NVT_FN C load(S v) { return (C)v; }                                   \
    static NVT_FN S store(C v) { return (S)v; }                                  \
    static NVT_FN C mac(C acc, C a, C b) { return nvt_add(acc, nvt_mul(a, b)); } \
    static NVT_FN C lowest() { return (long long)(-9223372036854775807ll - 1); } \
  };
NVT_INT_TRAITS(nvt_t_u8, unsigned char)
NVT_INT_TRAITS(nvt_t_i8, signed char)
NVT_INT_TRAITS(nvt_t_i16, short)
NVT_INT_TRAITS(nvt_t_i32, int)
NVT_INT_TRAITS(nvt_t_i64, long long)
#undef NVT_INT_TRAITS

struct nvt_t_f32 {
  typedef float S;
  typedef float C;
  static NVT_FN C load(S v) { return v; }
  static NVT_FN S store(C v) { return v; }
  static NVT_FN C mac(C acc, C a, C b) { return acc + a * b; }
  static NVT_FN C lowest() { return -NVT_INF; }
};
struct nvt_t_f16 {
  typedef unsigned short S;
  typedef float C;
  static NVT_FN C load(S v) { return nvt_h2f(v); }
  static NVT_FN S store(C v) { return nvt_f2h(v); }
  static NVT_FN C mac(C acc, C a, C b) { return acc + a * b; }
  static NVT_FN C lowest() { return -NVT_INF; }
};
struct nvt_t_bf16 {
  typedef unsigned short S;
  typedef float C;
  static NVT_FN C load(S v) { return nvt_bf2f(v); }
  static NVT_FN S store(C v) { return nvt_f2bf(v); }
  static NVT_FN C mac(C acc, C a, C b) { return acc + a * b; }
  static NVT_FN C lowest() { return -NVT_INF; }
};

// Instantiates a kernel template K<traits> as extern "C" entry points K_<dtype>,
// for blocks of up to THREADS threads (256 unless a kernel says otherwise).
#define NVT_FLOAT_KERNELS_SIZED(K, THREADS, PARAMS, ARGS)                 \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_f32 PARAMS {  \
    K<nvt_t_f32> ARGS;                                                    \
  }                                                                       \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_f16 PARAMS {  \
    K<nvt_t_f16> ARGS;                                                    \
  }                                                                       \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_bf16 PARAMS { \
    K<nvt_t_bf16> ARGS;                                                   \
  }
#define NVT_INT_KERNELS_SIZED(K, THREADS, PARAMS, ARGS)                  \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_u8 PARAMS {  \
    K<nvt_t_u8> ARGS;                                                    \
  }                                                                      \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_i8 PARAMS {  \
    K<nvt_t_i8> ARGS;                                                    \
  }                                                                      \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_i16 PARAMS { \
    K<nvt_t_i16> ARGS;                                                   \
  }                                                                      \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_i32 PARAMS { \
    K<nvt_t_i32> ARGS;                                                   \
  }                                                                      \
  extern "C" __global__ void __launch_bounds__(THREADS) K##_i64 PARAMS { \
    K<nvt_t_i64> ARGS;                                                   \
  }
#define NVT_FLOAT_KERNELS(K, PARAMS, ARGS) NVT_FLOAT_KERNELS_SIZED(K, 256, PARAMS, ARGS)
#define NVT_INT_KERNELS(K, PARAMS, ARGS) NVT_INT_KERNELS_SIZED(K, 256, PARAMS, ARGS)
