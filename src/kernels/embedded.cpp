#include "kernels/embedded.h"

#include <string>

#include "base/error.h"

namespace nvhcq::kernels {

std::string_view embedded_source(std::string_view name) {
  for (const auto& s : embedded_sources()) {
    if (s.name == name) return s.text;
  }
  throw Error("no embedded kernel source named '" + std::string(name) + "'");
}

}  // namespace nvhcq::kernels
