#pragma once
// The simulated desktop GPU behind nvidia.ko and nvidia-uvm.ko: a Hopper
// (H100-like: SM 9.0, 132 SMs, HOPPER_* classes) with the subset of RM escapes,
// classes, controls and UVM ioctls nvhcq's RM driver uses. Each call is checked
// as the kernel module checks it: escape sizes (EINVAL), parameter sizes,
// handles, parents and classes (RM status codes), UVM ranges and registrations.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drv/rm/rm_abi.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/uvm_abi.h"
#include "sim/sim_engine.h"
#include "sim/sim_machine.h"

namespace nvhcq::sim {

// An RM object of the simulated client tree.
struct RmObject {
  drv::rm::NvHandle handle = 0, parent = 0;
  uint32_t cls = 0;
  std::vector<drv::rm::NvHandle> children;
  std::shared_ptr<MemoryObject> memory;  // memory classes, usermode
  std::shared_ptr<AddressSpace> space;   // the device's GPU VA space (device and below)
  std::shared_ptr<SimChannel> channel;   // GPFIFO channels
  std::shared_ptr<ChannelGroup> group;   // channel groups
  bool externally_owned = false;         // VA spaces
};

// One /dev/nvidia-uvm file: a UVM VA space. nvidia-uvm registers a GPU, its RM
// VA space and its channels once per VA space, and refuses a second
// registration of the same GPU with NV_ERR_INVALID_DEVICE.
struct UvmVaSpace {
  bool gpu_registered = false;
  drv::rm::NvHandle vaspace = 0;                   // the registered RM VA space
  std::map<uint64_t, uint64_t> external_ranges;    // base -> length
  std::map<drv::rm::NvHandle, uint64_t> channels;  // registered channels -> base
};

class RmFrontEnd final : public FrontEnd {
 public:
  static constexpr const char* kCtlPath = "/dev/nvidiactl";
  static constexpr const char* kGpuPath = "/dev/nvidia0";
  static constexpr const char* kUvmPath = "/dev/nvidia-uvm";
  static constexpr const char* kDriverVersion = "580.95.05";

  explicit RmFrontEnd(SimMachine& machine);
  std::vector<std::string> nodes() const override;
  std::shared_ptr<SimFile> open(const std::string& path, int* err) override;
  std::map<std::string, std::string> files() const override;

  SimMachine& machine() { return machine_; }
  const GpuSpec& spec() const { return spec_; }
  const drv::rm::NvUuid& uuid() const { return uuid_; }

  // Escapes on /dev/nvidiactl (and /dev/nvidia0); return 0 or -errno.
  int escape(SimFile* self, unsigned long request, void* arg, bool ctl);
  // A UVM ioctl; returns 0 or -errno (RM status inside the params).
  int uvm(UvmVaSpace& space, unsigned long cmd, void* arg);
  // Open UVM files come and go with their SimFile.
  void add_uvm_space(const std::shared_ptr<UvmVaSpace>& space);

  // For tests: the live objects of a class, and the most recent MMU fault.
  size_t count_objects(uint32_t cls) const;
  std::shared_ptr<AddressSpace> device_space() const;

 private:
  using NvHandle = drv::rm::NvHandle;
  uint32_t alloc(drv::rm::Nvos21* p);
  uint32_t alloc_memory(drv::rm::Nvos02* p);
  uint32_t free(drv::rm::Nvos00* p);
  uint32_t control(drv::rm::Nvos54* p);
  uint32_t map_memory(drv::rm::Nvos33WithFd* p);
  uint32_t map_memory_dma(drv::rm::Nvos46* p);
  uint32_t make_object(uint32_t cls, NvHandle parent, void* params, uint32_t size, NvHandle* out);
  uint32_t make_channel(RmObject& o, const drv::rm::NvChannelAllocParams& p);
  void free_subtree(NvHandle h);
  RmObject* find(NvHandle h);
  RmObject* device_of(NvHandle h);
  NvHandle new_handle() { return next_handle_++; }
  void report(const ChannelFault& f, std::shared_ptr<MemoryObject> notifier);

  // UVM.
  uint32_t uvm_map_external(UvmVaSpace& space, drv::rm::UvmMapExternalAllocationParams* p);
  uint32_t uvm_free(UvmVaSpace& space, drv::rm::UvmFreeParams* p);
  // The UVM VA space into which `device`'s RM VA space is registered, if any.
  UvmVaSpace* uvm_space_of(const RmObject* device);

  SimMachine& machine_;
  GpuSpec spec_;
  drv::rm::NvUuid uuid_{};
  mutable std::recursive_mutex mutex_;
  std::map<NvHandle, RmObject> objects_;
  NvHandle next_handle_ = 0xcaf00001;
  uint32_t next_token_ = 0x2000;
  std::vector<std::weak_ptr<UvmVaSpace>> uvm_spaces_;
  // The last MMU fault, for the debugger object's READ_MMU_FAULT_INFO.
  uint64_t fault_va_ = 0;
  bool fault_valid_ = false;
  FaultKind fault_kind_ = FaultKind::kMmu;
};

}  // namespace nvhcq::sim
