#pragma once
// One nvidia-uvm VA space: a /dev/nvidia-uvm file, initialized, with a second
// file tying it to this process's mm (as libcuda does). nvidia-uvm registers a
// GPU, its RM VA space and its channels once per VA space, so every opened GPU
// (RmGpu) owns one: two devices of the same GPU in one process then coexist.

#include <cstddef>

#include "drv/sys.h"

namespace nvhcq::drv::rm {

class UvmSpace {
 public:
  // Opens and initializes; throws Error when nvidia-uvm is absent or refuses.
  UvmSpace();

  // A UVM ioctl on this VA space; `params` ends in ... NvStatus rmStatus at
  // `status_offset`. Throws Error on an ioctl failure or an RM status.
  void call(unsigned long cmd, void* params, size_t status_offset, const char* what) const;
  template <typename P>
  void call(unsigned long cmd, P& params, const char* what) const {
    call(cmd, &params, offsetof(P, rmStatus), what);
  }

 private:
  Fd fd_, mm_fd_;
};

}  // namespace nvhcq::drv::rm
