#include "drv/driver_iface.h"

namespace nvhcq::drv {

std::string GpuInfo::arch() const {
  uint32_t major = (sm_version >> 8) & 0xff;
  uint32_t minor = sm_version & 0xff;
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

}  // namespace nvhcq::drv
