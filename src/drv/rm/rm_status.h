#pragma once
// Names for RM status codes (NV_STATUS, nvstatuscodes.h), for error messages.

#include <cstdint>
#include <string>

namespace nvhcq::drv::rm {

constexpr uint32_t NV_OK = 0;
constexpr uint32_t NV_ERR_INSUFFICIENT_RESOURCES = 0x1a;
constexpr uint32_t NV_ERR_NO_MEMORY = 0x51;

// "NV_ERR_INVALID_ARGUMENT (0x1f)"; unknown codes print as hex.
std::string status_name(uint32_t status);

}  // namespace nvhcq::drv::rm
