#pragma once
// Float -> integer conversions exactly as ggml's reference quantizer performs
// them, so our quantized bytes equal llama.cpp's. Internal to llm/quant.
//
// The reference code relies on C conversions whose results on x86-64 are those
// of cvttss2si (NaN or out-of-range -> INT32_MIN) followed by keeping the low
// byte; C++ leaves those cases undefined, so they are spelled out here. For any
// finite input row the values stay in range and these are plain conversions.

#include <bit>
#include <cmath>
#include <cstdint>

namespace nvhcq::llm::detail {

// Round to nearest (ties to even for |x| < 2^22) through the 1.5 * 2^23 trick,
// as ggml's nearest_int: defined for every input, garbage-in garbage-out beyond 2^22.
inline int nearest_int(float x) {
  const float biased = x + 12582912.f;
  const int32_t bits = std::bit_cast<int32_t>(biased);
  return (bits & 0x007fffff) - 0x00400000;
}

// Truncation toward zero with x86's out-of-range answer.
inline int32_t trunc_to_int32(float x) {
  if (!(x >= -2147483648.0f && x < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(x);
}

// C's (int8_t)(float) and (uint8_t)(float) as compiled for x86-64.
inline int8_t trunc_to_int8(float x) {
  return static_cast<int8_t>(trunc_to_int32(x));
}
inline uint8_t trunc_to_uint8(float x) {
  return static_cast<uint8_t>(trunc_to_int32(x));
}

// roundf (halves away from zero) then (int8_t), as ggml's Q8_0/Q8_1 quantizers,
// without a libm call (this runs on every activation row): below 2^23 the
// fraction x - trunc(x) is exact, above it x is already an integer.
inline int8_t round_to_int8(float x) {
  int32_t t = trunc_to_int32(x);
  if (t != INT32_MIN) {
    const float frac = x - static_cast<float>(t);
    if (frac >= 0.5f)
      ++t;
    else if (frac <= -0.5f)
      --t;
  }
  return static_cast<int8_t>(t);
}

}  // namespace nvhcq::llm::detail
