#include "drv/rm/uvm_space.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "drv/rm/rm_status.h"
#include "drv/rm/uvm_abi.h"

namespace nvhcq::drv::rm {
namespace {

constexpr const char* kUvmPath = "/dev/nvidia-uvm";

void uvm_ioctl(int fd, unsigned long cmd, void* params, size_t status_offset, const char* what) {
  if (sys().ioctl(fd, cmd, params) != 0) {
    int err = errno;
    throw Error(std::string(what) + ": ioctl failed: " + std::strerror(err), what, err);
  }
  uint32_t status;
  std::memcpy(&status, static_cast<char*>(params) + status_offset, sizeof(status));
  if (status != NV_OK) throw_status(status, what, what);
}

}  // namespace

UvmSpace::UvmSpace() {
  fd_ = open_or_throw(kUvmPath, O_RDWR);
  UvmInitializeParams init{};
  call(UVM_INITIALIZE, init, "UVM_INITIALIZE");
  // UVM_MM_INITIALIZE ties UVM's view of this process's mm to a second file;
  // older drivers refuse it and nothing depends on it.
  mm_fd_ = open_or_throw(kUvmPath, O_RDWR);
  UvmMmInitializeParams mm{};
  mm.uvmFd = fd_.get();
  try {
    uvm_ioctl(mm_fd_.get(), UVM_MM_INITIALIZE, &mm, offsetof(UvmMmInitializeParams, rmStatus),
              "UVM_MM_INITIALIZE");
  } catch (const Error& e) {
    log::debug("UVM_MM_INITIALIZE refused (harmless): ", e.what());
  }
}

void UvmSpace::call(unsigned long cmd, void* params, size_t status_offset, const char* what) const {
  uvm_ioctl(fd_.get(), cmd, params, status_offset, what);
}

}  // namespace nvhcq::drv::rm
