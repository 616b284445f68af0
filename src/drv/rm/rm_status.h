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

// Throws the Error for an RM status other than NV_OK: OutOfMemoryError for the
// out-of-memory codes, Error otherwise. `what` says what was attempted, `call`
// names the escape or ioctl.
[[noreturn]] void throw_status(uint32_t status, const std::string& what, const std::string& call);

}  // namespace nvhcq::drv::rm
