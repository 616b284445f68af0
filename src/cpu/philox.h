#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"),
// the counter-based generator behind rand/randn/randint. Element e of a draw with
// seed s uses one block: counter {lo32(e), hi32(e), 0, 0}, key {lo32(s), hi32(s)}.
// Every backend generates tensors' random numbers with these functions (on the
// host), so the same seed gives the same numbers everywhere.

#include <array>
#include <cstdint>

#include "cpu/dtype.h"

namespace nvhcq::cpu {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// Fills out[0..count) (of dtype) with draws for elements first..first+count-1:
// uniform in [0, 1): 24 random bits for f16/bf16/f32, 53 for f64 (words 0,1);
// normal(0, 1): Box-Muller on two 53-bit uniforms (words 0..3), computed in double;
// randint in [low, high): 64 random bits (words 0,1) modulo (high - low).
void philox_uniform(uint64_t seed, uint64_t first, int64_t count, DType dtype, void* out);
void philox_normal(uint64_t seed, uint64_t first, int64_t count, DType dtype, void* out);
void philox_randint(uint64_t seed, uint64_t first, int64_t count, int64_t low, int64_t high, DType dtype, void* out);

}  // namespace nvhcq::cpu
