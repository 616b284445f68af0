#include "llm/quant/simd.h"

#include <cstdlib>
#include <cstring>

#include "cpu/cpu_info.h"

namespace nvhcq::llm {

bool quant_avx2_enabled() {
  static const bool enabled = [] {
    if (!NVHCQ_QUANT_HAVE_X86) return false;
    const char* env = std::getenv("NVHCQ_QUANT_SCALAR");
    if (env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0) return false;
    const auto& info = cpu::cpu_info();
    return info.avx2 && info.fma && info.f16c;
  }();
  return enabled;
}

}  // namespace nvhcq::llm
