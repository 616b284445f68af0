// The simulated nvidia-uvm: GPU and VA-space registration, channel
// registration, and external ranges into which RM memory is mapped for the GPU.
// UVM requests are plain numbers (no size in them), so it checks fields only.

#include <cstring>
#include <iterator>

#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_status.h"
#include "sim/sim_rm.h"

namespace nvhcq::sim {

using namespace drv::rm;  // NOLINT: the ABI this file implements

namespace {

constexpr uint32_t NV_ERR_INVALID_ARGUMENT = 0x1f, NV_ERR_INVALID_ADDRESS = 0x1e,
                   NV_ERR_GPU_UUID_NOT_FOUND = 0x12, NV_ERR_INVALID_DEVICE = 0x26,
                   NV_ERR_INVALID_CHANNEL = 0x21, NV_ERR_OBJECT_NOT_FOUND = 0x57,
                   NV_ERR_UVM_ADDRESS_IN_USE = 0x68;
constexpr uint64_t kPage = 4096;

bool same(const NvUuid& a, const NvUuid& b) {
  return std::memcmp(a.bytes, b.bytes, 16) == 0;
}

}  // namespace

void RmFrontEnd::add_uvm_space(const std::shared_ptr<UvmVaSpace>& space) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  std::erase_if(uvm_spaces_, [](const auto& weak) { return weak.expired(); });
  uvm_spaces_.push_back(space);
}

UvmVaSpace* RmFrontEnd::uvm_space_of(const RmObject* device) {
  if (device == nullptr) return nullptr;
  for (auto& weak : uvm_spaces_) {
    auto space = weak.lock();
    if (space && space->vaspace != 0 && device_of(space->vaspace) == device) return space.get();
  }
  return nullptr;
}

uint32_t RmFrontEnd::uvm_map_external(UvmVaSpace& space, UvmMapExternalAllocationParams* p) {
  if (p->length == 0 || p->base % kPage != 0 || p->length % kPage != 0 || p->offset % kPage != 0) {
    return NV_ERR_INVALID_ADDRESS;
  }
  auto r = space.external_ranges.upper_bound(p->base);
  if (r == space.external_ranges.begin()) return NV_ERR_INVALID_ADDRESS;
  --r;
  if (p->base + p->length > r->first + r->second) return NV_ERR_INVALID_ADDRESS;
  if (p->gpuAttributesCount == 0 || p->gpuAttributesCount > kUvmMaxGpus)
    return NV_ERR_INVALID_ARGUMENT;
  if (!same(p->perGpuAttributes[0].gpuUuid, uuid_) || !space.gpu_registered) {
    return NV_ERR_INVALID_DEVICE;
  }
  uint32_t type = p->perGpuAttributes[0].gpuMappingType;
  if (type < 1 || type > 3) return NV_ERR_INVALID_ARGUMENT;
  if (space.vaspace == 0) return NV_ERR_INVALID_DEVICE;  // no registered VA space for the GPU
  RmObject* mem = find(p->hMemory);
  if (mem == nullptr || !mem->memory || find(p->hClient) == nullptr) return NV_ERR_OBJECT_NOT_FOUND;
  if (p->offset + p->length > mem->memory->size()) return NV_ERR_INVALID_ARGUMENT;
  // The mapping goes into the page tables of the registered RM VA space's device.
  RmObject* dev = device_of(space.vaspace);
  if (dev == nullptr || device_of(p->hMemory) == nullptr) return NV_ERR_OBJECT_NOT_FOUND;
  if (!dev->space->map(Mapping{p->base, p->length, mem->memory, p->offset, true})) {
    return NV_ERR_UVM_ADDRESS_IN_USE;
  }
  return NV_OK;
}

uint32_t RmFrontEnd::uvm_free(UvmVaSpace& space, UvmFreeParams* p) {
  auto r = space.external_ranges.find(p->base);
  if (r == space.external_ranges.end()) return NV_ERR_INVALID_ADDRESS;
  // Everything mapped inside the range goes with it.
  if (RmObject* dev = device_of(space.vaspace)) {
    dev->space->unmap_range(r->first, r->first + r->second);
  }
  space.external_ranges.erase(r);
  return NV_OK;
}

int RmFrontEnd::uvm(UvmVaSpace& space, unsigned long cmd, void* arg) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto ctl_fd_ok = [&](int fd) {
    auto f = machine_.file(fd);
    return f && f->path() == kCtlPath;
  };
  switch (cmd) {
    case UVM_INITIALIZE:
      static_cast<UvmInitializeParams*>(arg)->rmStatus = NV_OK;
      return 0;
    case UVM_MM_INITIALIZE: {
      auto* p = static_cast<UvmMmInitializeParams*>(arg);
      auto f = machine_.file(p->uvmFd);
      p->rmStatus = f && f->path() == kUvmPath ? NV_OK : NV_ERR_INVALID_ARGUMENT;
      return 0;
    }
    case UVM_REGISTER_GPU: {
      auto* p = static_cast<UvmRegisterGpuParams*>(arg);
      if (!same(p->gpu_uuid, uuid_)) {
        p->rmStatus = NV_ERR_GPU_UUID_NOT_FOUND;
      } else if (space.gpu_registered) {
        p->rmStatus = NV_ERR_INVALID_DEVICE;  // once per VA space, as uvm_va_space_register_gpu
      } else {
        space.gpu_registered = true;
        p->rmStatus = NV_OK;
      }
      return 0;
    }
    case UVM_UNREGISTER_GPU: {
      auto* p = static_cast<UvmUnregisterGpuParams*>(arg);
      p->rmStatus =
          same(p->gpu_uuid, uuid_) && space.gpu_registered ? NV_OK : NV_ERR_INVALID_DEVICE;
      if (p->rmStatus == NV_OK) space.gpu_registered = false;
      return 0;
    }
    case UVM_REGISTER_GPU_VASPACE: {
      auto* p = static_cast<UvmRegisterGpuVaspaceParams*>(arg);
      RmObject* vas = find(p->hVaSpace);
      if (!same(p->gpuUuid, uuid_) || !space.gpu_registered || space.vaspace != 0) {
        p->rmStatus = NV_ERR_INVALID_DEVICE;
      } else if (!ctl_fd_ok(p->rmCtrlFd) || find(p->hClient) == nullptr) {
        p->rmStatus = NV_ERR_INVALID_ARGUMENT;
      } else if (vas == nullptr || vas->cls != FERMI_VASPACE_A || !vas->externally_owned) {
        p->rmStatus = NV_ERR_OBJECT_NOT_FOUND;
      } else {
        space.vaspace = p->hVaSpace;
        p->rmStatus = NV_OK;
      }
      return 0;
    }
    case UVM_UNREGISTER_GPU_VASPACE: {
      auto* p = static_cast<UvmUnregisterGpuVaspaceParams*>(arg);
      p->rmStatus = same(p->gpuUuid, uuid_) && space.vaspace != 0 ? NV_OK : NV_ERR_INVALID_DEVICE;
      space.vaspace = 0;
      return 0;
    }
    case UVM_REGISTER_CHANNEL: {
      auto* p = static_cast<UvmRegisterChannelParams*>(arg);
      RmObject* ch = find(p->hChannel);
      if (!same(p->gpuUuid, uuid_) || !ctl_fd_ok(p->rmCtrlFd)) {
        p->rmStatus = NV_ERR_INVALID_ARGUMENT;
      } else if (ch == nullptr || !ch->channel) {
        p->rmStatus = NV_ERR_INVALID_CHANNEL;
      } else if (space.vaspace == 0 || device_of(p->hChannel) != device_of(space.vaspace)) {
        p->rmStatus = NV_ERR_INVALID_DEVICE;  // the channel's GPU VA space is not in this one
      } else if (p->length == 0 || p->base % kPage != 0 || p->length % kPage != 0) {
        p->rmStatus = NV_ERR_INVALID_ADDRESS;
      } else {
        space.channels[p->hChannel] = p->base;
        p->rmStatus = NV_OK;
      }
      return 0;
    }
    case UVM_UNREGISTER_CHANNEL: {
      auto* p = static_cast<UvmUnregisterChannelParams*>(arg);
      p->rmStatus = space.channels.erase(p->hChannel) != 0 ? NV_OK : NV_ERR_INVALID_CHANNEL;
      return 0;
    }
    case UVM_CREATE_EXTERNAL_RANGE: {
      auto* p = static_cast<UvmCreateExternalRangeParams*>(arg);
      if (p->length == 0 || p->base % kPage != 0 || p->length % kPage != 0) {
        p->rmStatus = NV_ERR_INVALID_ADDRESS;
        return 0;
      }
      auto& ranges = space.external_ranges;
      auto next = ranges.lower_bound(p->base);
      bool overlap =
          (next != ranges.end() && next->first < p->base + p->length) ||
          (next != ranges.begin() && std::prev(next)->first + std::prev(next)->second > p->base);
      if (overlap) {
        p->rmStatus = NV_ERR_UVM_ADDRESS_IN_USE;
      } else {
        ranges[p->base] = p->length;
        p->rmStatus = NV_OK;
      }
      return 0;
    }
    case UVM_MAP_EXTERNAL_ALLOCATION: {
      auto* p = static_cast<UvmMapExternalAllocationParams*>(arg);
      p->rmStatus = uvm_map_external(space, p);
      return 0;
    }
    case UVM_FREE: {
      auto* p = static_cast<UvmFreeParams*>(arg);
      p->rmStatus = uvm_free(space, p);
      return 0;
    }
    default:
      return -EINVAL;
  }
}

}  // namespace nvhcq::sim
