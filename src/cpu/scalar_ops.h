#pragma once
// What each elementwise op computes on one value of a compute type (float, double
// or int64_t). This file is the semantic definition the GPU code generator must
// match. Integer arithmetic wraps (two's complement) and never traps:
//  - x mod 0 == 0 and x mod -1 == 0; mod takes the sign of the divisor (Python);
//  - pow with a negative integer exponent is 1/x^|e| truncated (0 unless |x| == 1);
//  - shifts by a negative count or by >= 64 give 0 (left) or the sign fill (right);
//    counts between the element width and 63 act on the i64 value before the
//    result is narrowed, i.e. they also give 0 / sign fill.
// Floats: max/min propagate NaN, round is half-to-even, sign(NaN) is NaN, float
// mod follows the divisor's sign.

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nvhcq::cpu::scalar {

template <typename C> inline constexpr bool kInt = std::is_integral_v<C>;

inline int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

template <typename C> inline C add(C a, C b) { if constexpr (kInt<C>) return wrap_add(a, b); else return a + b; }
template <typename C> inline C sub(C a, C b) { if constexpr (kInt<C>) return wrap_sub(a, b); else return a - b; }
template <typename C> inline C mul(C a, C b) { if constexpr (kInt<C>) return wrap_mul(a, b); else return a * b; }
template <typename C> inline C neg(C a) { if constexpr (kInt<C>) return wrap_sub(0, a); else return -a; }
template <typename C> inline C abs(C a) { if constexpr (kInt<C>) return a < 0 ? wrap_sub(0, a) : a; else return std::fabs(a); }

template <typename C> inline C maximum(C a, C b) {
  if constexpr (!kInt<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <typename C> inline C minimum(C a, C b) {
  if constexpr (!kInt<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

template <typename C> inline C mod(C a, C b) {
  if constexpr (kInt<C>) {
    if (b == 0 || b == -1) return 0;
    C r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    C r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

template <typename C> inline C pow(C a, C b) {
  if constexpr (kInt<C>) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    int64_t result = 1, base = a;
    uint64_t e = static_cast<uint64_t>(b);
    while (e) {
      if (e & 1) result = wrap_mul(result, base);
      base = wrap_mul(base, base);
      e >>= 1;
    }
    return result;
  } else {
    return std::pow(a, b);
  }
}

inline int64_t shl(int64_t a, int64_t b) {
  if (b < 0 || b >= 64) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}
inline int64_t shr(int64_t a, int64_t b) {
  if (b < 0 || b >= 64) return a < 0 ? -1 : 0;
  return a >> b;
}

template <typename C> inline C sign(C a) {
  if constexpr (!kInt<C>) {
    if (a != a) return a;
  }
  return static_cast<C>((a > 0) - (a < 0));
}

template <typename C> inline C sigmoid(C a) { return C(1) / (C(1) + std::exp(-a)); }
template <typename C> inline C rsqrt(C a) { return C(1) / std::sqrt(a); }
template <typename C> inline C round_half_even(C a) { return std::nearbyint(a); }

}  // namespace nvhcq::cpu::scalar
