#pragma once
// An RM client: the process's handle on nvidia.ko. It owns /dev/nvidiactl and
// the root client object, and speaks the escapes (alloc, free, control, CPU
// mapping) on behalf of every opened GPU. One per process, created on first
// use. UVM state is per opened GPU (UvmSpace): nvidia-uvm registers a GPU once
// per VA space, that is once per /dev/nvidia-uvm file.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "drv/rm/rm_abi.h"
#include "drv/sys.h"

namespace nvhcq::drv::rm {

// Driver major versions whose ABI nvhcq is written against.
constexpr int kSupportedDriverMajors[] = {580};

class RmClient {
 public:
  // The process-wide client; opens the driver on first call. Throws Error when
  // the driver is absent or its version is not supported.
  static RmClient& instance();

  NvHandle root() const { return root_; }
  int ctl_fd() const { return ctl_.get(); }
  const std::string& driver_version() const { return driver_version_; }

  // NV_ESC_RM_ALLOC; returns the new object's handle (RM chooses it).
  NvHandle alloc(NvHandle parent, uint32_t cls, void* params, uint32_t params_size,
                 const char* what);
  template <typename P>
  NvHandle alloc(NvHandle parent, uint32_t cls, P& params, const char* what) {
    return alloc(parent, cls, &params, sizeof(P), what);
  }
  NvHandle alloc(NvHandle parent, uint32_t cls, const char* what) {
    return alloc(parent, cls, nullptr, 0, what);
  }
  // NV_ESC_RM_FREE; errors are logged, not thrown (used on teardown paths).
  void free(NvHandle parent, NvHandle object);

  void control(NvHandle object, uint32_t cmd, void* params, uint32_t size, const char* what);
  template <typename P>
  P& control(NvHandle object, uint32_t cmd, P& params, const char* what) {
    control(object, cmd, &params, sizeof(P), what);
    return params;
  }

  std::vector<NvCardInfo> cards();
  // Opens /dev/nvidiaN and registers it with the control fd.
  Fd open_gpu_fd(uint32_t minor);
  // Maps RM memory object `memory` (of `device`) into the CPU at `target`
  // (MAP_FIXED) with the given NVOS33 caching flags. `system` picks the control
  // node (system memory) instead of the GPU node (video memory through BAR1).
  void map_to_cpu(NvHandle device, NvHandle memory, uint64_t size, void* target, uint32_t flags,
                  uint32_t gpu_minor, bool system);

  // A fresh handle for objects whose handle the caller must provide (OS-descriptor memory).
  NvHandle next_handle();

  RmClient(const RmClient&) = delete;
  RmClient& operator=(const RmClient&) = delete;

 private:
  RmClient();
  void check_driver_version();

  Fd ctl_;
  NvHandle root_ = 0;
  std::string driver_version_;
  std::mutex handle_mutex_;
  // Handles nvhcq chooses itself (OS-descriptor memory). RM generates its own from
  // 0xcaf00000 up, so ours start elsewhere.
  NvHandle handle_counter_ = 0x6e760000;
};

}  // namespace nvhcq::drv::rm
