#pragma once
// What the host CPU is: for `nvhcq info` and for choosing CPU kernels.

#include <string>

namespace nvhcq::cpu {

struct CpuInfo {
  std::string model;     // e.g. "Intel(R) Xeon(R) Processor"
  std::string arch;      // "x86_64", "aarch64"
  int logical_cores = 1; // threads the OS lets this process use
  bool avx2 = false, fma = false, f16c = false, avx512f = false, neon = false;
};

const CpuInfo& cpu_info();

}  // namespace nvhcq::cpu
