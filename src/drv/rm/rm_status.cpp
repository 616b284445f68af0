#include "drv/rm/rm_status.h"

#include <cstdio>

#include "base/error.h"

namespace nvhcq::drv::rm {
namespace {

struct Named {
  uint32_t code;
  const char* name;
};

// The codes RM returns to the calls nvhcq makes, plus the usual suspects.
constexpr Named kNames[] = {
    {0x00, "NV_OK"},
    {0xffff, "NV_ERR_GENERIC"},
    {0x02, "NV_ERR_BUFFER_TOO_SMALL"},
    {0x05, "NV_ERR_CARD_NOT_PRESENT"},
    {0x0f, "NV_ERR_GPU_IS_LOST"},
    {0x12, "NV_ERR_GPU_UUID_NOT_FOUND"},
    {0x16, "NV_ERR_ILLEGAL_ACTION"},
    {0x17, "NV_ERR_IN_USE"},
    {0x1a, "NV_ERR_INSUFFICIENT_RESOURCES"},
    {0x1b, "NV_ERR_INSUFFICIENT_PERMISSIONS"},
    {0x1e, "NV_ERR_INVALID_ADDRESS"},
    {0x1f, "NV_ERR_INVALID_ARGUMENT"},
    {0x21, "NV_ERR_INVALID_CHANNEL"},
    {0x22, "NV_ERR_INVALID_CLASS"},
    {0x23, "NV_ERR_INVALID_CLIENT"},
    {0x24, "NV_ERR_INVALID_COMMAND"},
    {0x26, "NV_ERR_INVALID_DEVICE"},
    {0x29, "NV_ERR_INVALID_FLAGS"},
    {0x2e, "NV_ERR_INVALID_LIMIT"},
    {0x31, "NV_ERR_INVALID_OBJECT"},
    {0x33, "NV_ERR_INVALID_OBJECT_HANDLE"},
    {0x34, "NV_ERR_INVALID_OBJECT_NEW"},
    {0x36, "NV_ERR_INVALID_OBJECT_PARENT"},
    {0x37, "NV_ERR_INVALID_OFFSET"},
    {0x38, "NV_ERR_INVALID_OPERATION"},
    {0x3a, "NV_ERR_INVALID_PARAM_STRUCT"},
    {0x3b, "NV_ERR_INVALID_PARAMETER"},
    {0x3d, "NV_ERR_INVALID_POINTER"},
    {0x3f, "NV_ERR_INVALID_REQUEST"},
    {0x40, "NV_ERR_INVALID_STATE"},
    {0x51, "NV_ERR_NO_MEMORY"},
    {0x54, "NV_ERR_NOT_COMPATIBLE"},
    {0x55, "NV_ERR_NOT_READY"},
    {0x56, "NV_ERR_NOT_SUPPORTED"},
    {0x57, "NV_ERR_OBJECT_NOT_FOUND"},
    {0x58, "NV_ERR_OBJECT_TYPE_MISMATCH"},
    {0x59, "NV_ERR_OPERATING_SYSTEM"},
    {0x5b, "NV_ERR_OUT_OF_RANGE"},
    {0x5f, "NV_ERR_PROTECTION_FAULT"},
    {0x60, "NV_ERR_RC_ERROR"},
    {0x62, "NV_ERR_RESET_REQUIRED"},
    {0x65, "NV_ERR_TIMEOUT"},
    {0x68, "NV_ERR_UVM_ADDRESS_IN_USE"},
    {0x6a, "NV_ERR_LIB_RM_VERSION_MISMATCH"},
    {0x71, "NV_ERR_FATAL_ERROR"},
};

}  // namespace

std::string status_name(uint32_t status) {
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%x", status);
  for (const auto& n : kNames) {
    if (n.code == status) return std::string(n.name) + " (" + hex + ")";
  }
  return std::string("RM status ") + hex;
}

void throw_status(uint32_t status, const std::string& what, const std::string& call) {
  std::string text = what + ": " + status_name(status);
  if (status == NV_ERR_NO_MEMORY || status == NV_ERR_INSUFFICIENT_RESOURCES) {
    throw OutOfMemoryError(text, call, status, "free GPU memory or allocate less");
  }
  throw Error(text, call, status);
}

}  // namespace nvhcq::drv::rm
