#include "base/hash.h"

#include <cstdio>

namespace nvhcq {
namespace {

constexpr uint64_t kPrime = 0x100000001b3ull;

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

ContentHash& ContentHash::add(std::string_view bytes) {
  for (unsigned char c : bytes) {
    a_ = (a_ ^ c) * kPrime;
    b_ = (b_ ^ (c + 0x9e)) * kPrime;
  }
  // Length-delimit so ("ab","c") and ("a","bc") differ.
  return add(static_cast<uint64_t>(bytes.size()) ^ 0x5bd1e995ull);
}

ContentHash& ContentHash::add(uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    unsigned char c = static_cast<unsigned char>(value >> (8 * i));
    a_ = (a_ ^ c) * kPrime;
    b_ = (b_ ^ (c + 0x9e)) * kPrime;
  }
  return *this;
}

std::string ContentHash::hex() const {
  char out[33];
  std::snprintf(out, sizeof(out), "%016llx%016llx", static_cast<unsigned long long>(mix(a_)),
                static_cast<unsigned long long>(mix(b_ ^ a_)));
  return out;
}

}  // namespace nvhcq
