#pragma once
// The GPUs the robustness suites (tests/cases/robust_suite.h) run on: like
// HcqBackend, but a device can be opened with options (small rings, short
// timeouts), which fault and backpressure tests need. The simulated backends
// live in tests/sim/; the real ones here.

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "gpu/device.h"

namespace nvhcq::testing {

struct RobustBackend {
  std::string name;
  std::function<std::unique_ptr<gpu::Device>(const gpu::DeviceOptions&)> open;
  // Empty when the backend can run here, else why the tests skip.
  std::function<std::string()> unavailable;
  // False for the simulator (kernels are CPU functions): timing and huge sizes scale down.
  bool real_hardware = true;
};

inline std::ostream& operator<<(std::ostream& os, const RobustBackend& b) {
  return os << b.name;
}
inline std::string robust_backend_name(const ::testing::TestParamInfo<RobustBackend>& info) {
  return info.param.name;
}

// GPU 0 through the RM driver, and a Jetson's GPU through nvgpu (each skips
// where it is absent or NVRTC is missing).
RobustBackend rm_robust_backend();
RobustBackend tegra_robust_backend();

}  // namespace nvhcq::testing
