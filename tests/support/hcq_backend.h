#pragma once
// The GPU a parameterized runtime suite runs against: the real RM driver, or one
// of the simulated kernels of tests/sim/. Suites in tests/cases/ are written once
// and instantiated per backend.

#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace nvhcq::gpu {
class Device;
}

namespace nvhcq::testing {

struct HcqBackend {
  std::string name;
  // Opens a fresh device; called once per test.
  std::function<std::unique_ptr<gpu::Device>()> open;
  // Empty when the backend can run here, else why the tests skip.
  std::function<std::string()> unavailable;
  // False for backends whose kernels are CPU functions (simulator): tests that
  // need real GPU behaviour (timing, huge copies) skip there.
  bool real_hardware = true;
};

inline std::ostream& operator<<(std::ostream& os, const HcqBackend& b) { return os << b.name; }

inline std::string backend_name(const ::testing::TestParamInfo<HcqBackend>& info) {
  return info.param.name;
}

}  // namespace nvhcq::testing
