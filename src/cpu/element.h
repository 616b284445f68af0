#pragma once
// Typed element access for kernels: the C++ storage type of each DType, the
// conversions between storage types and the three compute types (float, double,
// int64_t), and a dispatch macro. These conversions define what casts mean:
//  - float -> integer truncates toward zero, saturates at the integer's range,
//    and maps NaN to 0;
//  - integer -> narrower integer wraps (two's complement);
//  - anything -> bool is "!= 0" (NaN is true); bool -> number is 0 or 1;
//  - narrowing float conversions round to nearest even once (see half.h).

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cpu/dtype.h"
#include "cpu/half.h"

namespace nvhcq::cpu {

// bool is stored as one byte holding 0 or 1.
struct Bool8 {
  uint8_t v;
};

template <DType T> struct StorageOf;
template <> struct StorageOf<DType::kBool> { using type = Bool8; };
template <> struct StorageOf<DType::kU8> { using type = uint8_t; };
template <> struct StorageOf<DType::kI8> { using type = int8_t; };
template <> struct StorageOf<DType::kI16> { using type = int16_t; };
template <> struct StorageOf<DType::kI32> { using type = int32_t; };
template <> struct StorageOf<DType::kI64> { using type = int64_t; };
template <> struct StorageOf<DType::kF16> { using type = Half; };
template <> struct StorageOf<DType::kBF16> { using type = BFloat16; };
template <> struct StorageOf<DType::kF32> { using type = float; };
template <> struct StorageOf<DType::kF64> { using type = double; };
template <DType T> using storage_t = typename StorageOf<T>::type;

// Runs `body` with `S` bound to the storage type of `dtype`.
#define NVHCQ_DISPATCH_DTYPE(dtype, S, ...)                                  \
  switch (dtype) {                                                           \
    case ::nvhcq::cpu::DType::kBool: { using S = ::nvhcq::cpu::Bool8; __VA_ARGS__; break; } \
    case ::nvhcq::cpu::DType::kU8: { using S = uint8_t; __VA_ARGS__; break; }     \
    case ::nvhcq::cpu::DType::kI8: { using S = int8_t; __VA_ARGS__; break; }      \
    case ::nvhcq::cpu::DType::kI16: { using S = int16_t; __VA_ARGS__; break; }    \
    case ::nvhcq::cpu::DType::kI32: { using S = int32_t; __VA_ARGS__; break; }    \
    case ::nvhcq::cpu::DType::kI64: { using S = int64_t; __VA_ARGS__; break; }    \
    case ::nvhcq::cpu::DType::kF16: { using S = ::nvhcq::cpu::Half; __VA_ARGS__; break; } \
    case ::nvhcq::cpu::DType::kBF16: { using S = ::nvhcq::cpu::BFloat16; __VA_ARGS__; break; } \
    case ::nvhcq::cpu::DType::kF32: { using S = float; __VA_ARGS__; break; }      \
    case ::nvhcq::cpu::DType::kF64: { using S = double; __VA_ARGS__; break; }     \
  }

// Runs `body` with `C` bound to the compute type (float, double or int64_t).
#define NVHCQ_DISPATCH_COMPUTE(ctype, C, ...)                           \
  switch (ctype) {                                                      \
    case ::nvhcq::cpu::DType::kF32: { using C = float; __VA_ARGS__; break; }  \
    case ::nvhcq::cpu::DType::kF64: { using C = double; __VA_ARGS__; break; } \
    default: { using C = int64_t; __VA_ARGS__; break; }                 \
  }

template <typename I>
inline I saturate_to_int(double d) {
  if (std::isnan(d)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (d <= lo) return std::numeric_limits<I>::min();
  if (d >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(d);
}

// Storage -> compute type.
template <typename C, typename S>
inline C load_as(S v) {
  if constexpr (std::is_same_v<S, Bool8>) {
    return static_cast<C>(v.v != 0);
  } else if constexpr (std::is_same_v<S, Half>) {
    if constexpr (std::is_same_v<C, int64_t>) return saturate_to_int<int64_t>(half_to_float(v.bits));
    else return static_cast<C>(half_to_float(v.bits));
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    if constexpr (std::is_same_v<C, int64_t>) return saturate_to_int<int64_t>(bf16_to_float(v.bits));
    else return static_cast<C>(bf16_to_float(v.bits));
  } else if constexpr (std::is_floating_point_v<S> && std::is_same_v<C, int64_t>) {
    return saturate_to_int<int64_t>(static_cast<double>(v));
  } else {
    return static_cast<C>(v);
  }
}

// Compute type -> storage.
template <typename S, typename C>
inline S store_as(C v) {
  if constexpr (std::is_same_v<S, Bool8>) {
    return Bool8{static_cast<uint8_t>(v != 0)};
  } else if constexpr (std::is_same_v<S, Half>) {
    if constexpr (std::is_same_v<C, float>) return Half{float_to_half(v)};
    else return Half{double_to_half(static_cast<double>(v))};
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    if constexpr (std::is_same_v<C, float>) return BFloat16{float_to_bf16(v)};
    else return BFloat16{double_to_bf16(static_cast<double>(v))};
  } else if constexpr (std::is_integral_v<S> && std::is_floating_point_v<C>) {
    return saturate_to_int<S>(static_cast<double>(v));
  } else {
    return static_cast<S>(v);
  }
}

// Reads element `index` of a typed buffer as double / int64 (for tests, item(), constants).
double read_as_double(const void* data, DType dtype, int64_t index);
int64_t read_as_int64(const void* data, DType dtype, int64_t index);
// Writes a value converted with the rules above.
void write_from_double(void* data, DType dtype, int64_t index, double value);
void write_from_int64(void* data, DType dtype, int64_t index, int64_t value);

}  // namespace nvhcq::cpu
