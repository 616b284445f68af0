#include "base/env.h"

#include <cstdlib>
#include <string>

#include "base/error.h"

namespace nvhcq {

std::optional<long> env_integer(const char* name, long lo, long hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < lo || n > hi) {
    throw UsageError(std::string(name) + " must be a number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", not '" + v + "'");
  }
  return n;
}

}  // namespace nvhcq
