#include "cpu/philox.h"

#include <cmath>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/thread_pool.h"

namespace nvhcq::cpu {
namespace {

constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

std::array<uint32_t, 4> block(uint64_t seed, uint64_t element) {
  return philox4x32_10({static_cast<uint32_t>(element), static_cast<uint32_t>(element >> 32), 0u, 0u},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

double uniform53(uint32_t hi, uint32_t lo) {
  uint64_t bits = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

template <typename F>
void fill(int64_t count, F f) {
  parallel_for(0, count, 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) f(i);
  });
}

}  // namespace

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

void philox_uniform(uint64_t seed, uint64_t first, int64_t count, DType dtype, void* out) {
  if (!is_float(dtype)) throw Error(std::string("rand needs a float dtype, not ") + dtype_name(dtype));
  fill(count, [&](int64_t i) {
    auto w = block(seed, first + static_cast<uint64_t>(i));
    if (dtype == DType::kF64) {
      static_cast<double*>(out)[i] = uniform53(w[0], w[1]);
    } else {
      // 24 bits: exact in f32. Narrower types round; values that round up to 1.0
      // are clamped below 1 so the range stays [0, 1).
      float u = static_cast<float>(w[0] >> 8) * 0x1.0p-24f;
      write_from_double(out, dtype, i, u);
      if (read_as_double(out, dtype, i) >= 1.0) {
        write_from_double(out, dtype, i, dtype == DType::kF16 ? 0.99951171875 : 0.99609375);
      }
    }
  });
}

void philox_normal(uint64_t seed, uint64_t first, int64_t count, DType dtype, void* out) {
  if (!is_float(dtype)) throw Error(std::string("randn needs a float dtype, not ") + dtype_name(dtype));
  fill(count, [&](int64_t i) {
    auto w = block(seed, first + static_cast<uint64_t>(i));
    const double u1 = 1.0 - uniform53(w[0], w[1]);  // (0, 1]: log is finite
    const double u2 = uniform53(w[2], w[3]);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    write_from_double(out, dtype, i, z);
  });
}

void philox_randint(uint64_t seed, uint64_t first, int64_t count, int64_t low, int64_t high, DType dtype, void* out) {
  if (high <= low) throw Error("randint needs low < high, got [" + std::to_string(low) + ", " + std::to_string(high) + ")");
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  fill(count, [&](int64_t i) {
    auto w = block(seed, first + static_cast<uint64_t>(i));
    const uint64_t bits = static_cast<uint64_t>(w[0]) << 32 | w[1];
    const int64_t value = static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range);
    write_from_int64(out, dtype, i, value);
  });
}

}  // namespace nvhcq::cpu
