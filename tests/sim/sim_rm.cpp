// The simulated RM driver: device nodes, escapes, the object tree (allocation,
// freeing, parents, classes) and memory (allocation and CPU and GPU mapping).

#include "sim/sim_rm.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/rm_status.h"

namespace nvhcq::sim {

using namespace drv::rm;  // NOLINT: the ABI this file implements

namespace {

constexpr uint32_t kGpuId = 0x1b00;
constexpr uint64_t kVideoMemory = 80ull << 30;
constexpr uint32_t NV_ERR_INVALID_CLIENT = 0x23, NV_ERR_INVALID_CLASS = 0x22,
                   NV_ERR_INVALID_ARGUMENT = 0x1f, NV_ERR_INVALID_OBJECT_HANDLE = 0x33,
                   NV_ERR_INVALID_OBJECT_NEW = 0x34, NV_ERR_INVALID_OBJECT_PARENT = 0x36,
                   NV_ERR_INVALID_OFFSET = 0x37, NV_ERR_INVALID_ADDRESS = 0x1e,
                   NV_ERR_NOT_SUPPORTED = 0x56, NV_ERR_INVALID_LIMIT = 0x2e;

// A node of nvidia.ko: /dev/nvidiactl or /dev/nvidia0. A mapping prepared by
// NV_ESC_RM_MAP_MEMORY waits on the fd it named until that fd is mmap'd.
class RmNodeFile final : public SimFile {
 public:
  RmNodeFile(RmFrontEnd& rm, bool ctl) : rm_(rm), ctl_(ctl) {}
  int ioctl(unsigned long request, void* arg) override {
    return rm_.escape(this, request, arg, ctl_);
  }
  void* mmap(void* addr, size_t length, int prot, int flags, off_t offset, int* err) override {
    if (!pending || length != pending_length || offset != 0) {
      *err = EINVAL;
      return MAP_FAILED;
    }
    void* p = pending->map_for_cpu(addr, length, prot, flags, pending_offset);
    if (p == MAP_FAILED) *err = errno;
    pending.reset();
    return p;
  }
  bool ctl() const { return ctl_; }
  bool registered = false;
  std::shared_ptr<MemoryObject> pending;
  uint64_t pending_length = 0, pending_offset = 0;

 private:
  RmFrontEnd& rm_;
  bool ctl_;
};

class UvmFile final : public SimFile {
 public:
  explicit UvmFile(RmFrontEnd& rm) : rm_(rm), space_(std::make_shared<UvmVaSpace>()) {
    rm_.add_uvm_space(space_);
  }
  int ioctl(unsigned long request, void* arg) override { return rm_.uvm(*space_, request, arg); }

 private:
  RmFrontEnd& rm_;
  std::shared_ptr<UvmVaSpace> space_;
};

struct ClassRule {
  uint32_t cls;
  std::vector<uint32_t> parents;
  uint32_t params_size;
};

}  // namespace

RmFrontEnd::RmFrontEnd(SimMachine& machine) : machine_(machine) {
  spec_.sm_version = 0x900;
  spec_.compute_class = HOPPER_COMPUTE_A;
  spec_.dma_class = HOPPER_DMA_COPY_A;
  spec_.num_gpcs = 8;
  spec_.tpc_per_gpc = 9;
  spec_.sm_per_tpc = 2;
  spec_.max_warps_per_sm = 64;
  spec_.tpc_count = 66;
  const uint8_t id[16] = {0x5a, 0x17, 0x0c, 0x9e, 0x41, 0x2b, 0x7d, 0x10,
                          0x88, 0x3f, 0xa2, 0x61, 0xe4, 0x05, 0xb9, 0xc7};
  std::memcpy(uuid_.bytes, id, 16);
}

std::vector<std::string> RmFrontEnd::nodes() const {
  return {kCtlPath, kGpuPath, kUvmPath};
}

std::map<std::string, std::string> RmFrontEnd::files() const {
  return {{"/proc/driver/nvidia/version",
           std::string("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  ") +
               kDriverVersion + "  Release Build  (simulated)\n"}};
}

std::shared_ptr<SimFile> RmFrontEnd::open(const std::string& path, int* err) {
  if (path == kCtlPath) return std::make_shared<RmNodeFile>(*this, true);
  if (path == kGpuPath) return std::make_shared<RmNodeFile>(*this, false);
  if (path == kUvmPath) return std::make_shared<UvmFile>(*this);
  *err = ENOENT;
  return nullptr;
}

RmObject* RmFrontEnd::find(NvHandle h) {
  auto it = objects_.find(h);
  return it == objects_.end() ? nullptr : &it->second;
}

RmObject* RmFrontEnd::device_of(NvHandle h) {
  for (RmObject* o = find(h); o != nullptr; o = find(o->parent)) {
    if (o->cls == NV01_DEVICE_0) return o;
  }
  return nullptr;
}

size_t RmFrontEnd::count_objects(uint32_t cls) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [h, o] : objects_) n += o.cls == cls;
  return n;
}

std::shared_ptr<AddressSpace> RmFrontEnd::device_space() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (const auto& [h, o] : objects_) {
    if (o.cls == NV01_DEVICE_0) return o.space;
  }
  return nullptr;
}

int RmFrontEnd::escape(SimFile* self, unsigned long request, void* arg, bool ctl) {
  if (((request >> 8) & 0xff) != 'F' || (request >> 30) != 3) return -EINVAL;
  uint32_t nr = request & 0xff, size = (request >> 16) & 0x3fff;
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto sized = [&](uint32_t want) { return size == want; };
  switch (nr) {
    case NV_ESC_CARD_INFO: {
      if (size < sizeof(NvCardInfo) || size % sizeof(NvCardInfo) != 0) return -EINVAL;
      auto* cards = static_cast<NvCardInfo*>(arg);
      std::memset(cards, 0, size);
      cards[0].valid = 1;
      cards[0].pci_info = NvPciInfo{0, 0x1b, 0, 0, 0x10de, 0x2330};
      cards[0].gpu_id = kGpuId;
      cards[0].minor_number = 0;
      cards[0].fb_size = kVideoMemory;
      return 0;
    }
    case NV_ESC_REGISTER_FD: {
      if (ctl || !sized(sizeof(NvRegisterFd))) return -EINVAL;
      auto f = std::dynamic_pointer_cast<RmNodeFile>(
          machine_.file(static_cast<NvRegisterFd*>(arg)->ctl_fd));
      if (!f || !f->ctl()) return -EINVAL;
      static_cast<RmNodeFile*>(self)->registered = true;
      return 0;
    }
    case NV_ESC_RM_ALLOC:
      if (!sized(sizeof(Nvos21))) return -EINVAL;
      static_cast<Nvos21*>(arg)->status = alloc(static_cast<Nvos21*>(arg));
      return 0;
    case NV_ESC_RM_ALLOC_MEMORY:
      if (ctl || !sized(sizeof(Nvos02WithFd))) return -EINVAL;
      static_cast<Nvos02*>(arg)->status = alloc_memory(static_cast<Nvos02*>(arg));
      return 0;
    case NV_ESC_RM_FREE:
      if (!sized(sizeof(Nvos00))) return -EINVAL;
      static_cast<Nvos00*>(arg)->status = free(static_cast<Nvos00*>(arg));
      return 0;
    case NV_ESC_RM_CONTROL:
      if (!sized(sizeof(Nvos54))) return -EINVAL;
      static_cast<Nvos54*>(arg)->status = control(static_cast<Nvos54*>(arg));
      return 0;
    case NV_ESC_RM_MAP_MEMORY:
      if (!sized(sizeof(Nvos33WithFd))) return -EINVAL;
      static_cast<Nvos33WithFd*>(arg)->params.status = map_memory(static_cast<Nvos33WithFd*>(arg));
      return 0;
    case NV_ESC_RM_MAP_MEMORY_DMA:
      if (!sized(sizeof(Nvos46))) return -EINVAL;
      static_cast<Nvos46*>(arg)->status = map_memory_dma(static_cast<Nvos46*>(arg));
      return 0;
    default:
      return -EINVAL;
  }
}

uint32_t RmFrontEnd::alloc(Nvos21* p) {
  if (p->hClass == NV01_ROOT_CLIENT) {
    RmObject root;
    root.handle = 0xc1d00000 + static_cast<NvHandle>(objects_.size() + 1);
    root.cls = NV01_ROOT_CLIENT;
    p->hObjectNew = root.handle;
    objects_[root.handle] = root;
    return NV_OK;
  }
  RmObject* root = find(p->hRoot);
  if (root == nullptr || root->cls != NV01_ROOT_CLIENT) return NV_ERR_INVALID_CLIENT;
  NvHandle h = p->hObjectNew;
  if (h != 0 && find(h) != nullptr) return NV_ERR_INVALID_OBJECT_NEW;
  if (p->paramsSize != 0 && p->pAllocParms == 0) return NV_ERR_INVALID_ARGUMENT;
  uint32_t status = make_object(p->hClass, p->hObjectParent,
                                reinterpret_cast<void*>(p->pAllocParms), p->paramsSize, &h);
  if (status == NV_OK) p->hObjectNew = h;
  return status;
}

uint32_t RmFrontEnd::make_object(uint32_t cls, NvHandle parent, void* params, uint32_t size,
                                 NvHandle* out) {
  static const std::vector<ClassRule> kRules = {
      {NV01_DEVICE_0, {NV01_ROOT_CLIENT}, sizeof(Nv0080AllocParams)},
      {NV20_SUBDEVICE_0, {NV01_DEVICE_0}, sizeof(Nv2080AllocParams)},
      {NV01_MEMORY_VIRTUAL, {NV01_DEVICE_0}, sizeof(NvMemoryVirtualAllocParams)},
      {NV01_MEMORY_LOCAL_USER, {NV01_DEVICE_0}, sizeof(NvMemoryAllocationParams)},
      {NV01_MEMORY_SYSTEM, {NV01_DEVICE_0}, sizeof(NvMemoryAllocationParams)},
      {FERMI_VASPACE_A, {NV01_DEVICE_0}, sizeof(NvVaspaceAllocationParams)},
      {KEPLER_CHANNEL_GROUP_A, {NV01_DEVICE_0}, sizeof(NvChannelGroupAllocationParams)},
      {FERMI_CONTEXT_SHARE_A, {KEPLER_CHANNEL_GROUP_A}, sizeof(NvCtxshareAllocationParams)},
      {HOPPER_CHANNEL_GPFIFO_A, {KEPLER_CHANNEL_GROUP_A}, sizeof(NvChannelAllocParams)},
      {HOPPER_USERMODE_A, {NV20_SUBDEVICE_0}, 0},
      {HOPPER_COMPUTE_A, {HOPPER_CHANNEL_GPFIFO_A}, 0},
      {HOPPER_DMA_COPY_A, {HOPPER_CHANNEL_GPFIFO_A}, 0},
      {GT200_DEBUGGER, {NV01_DEVICE_0}, sizeof(Nv83deAllocParams)},
  };
  const ClassRule* rule = nullptr;
  for (const auto& r : kRules) {
    if (r.cls == cls) rule = &r;
  }
  if (rule == nullptr) return NV_ERR_INVALID_CLASS;
  RmObject* par = find(parent);
  if (par == nullptr ||
      std::find(rule->parents.begin(), rule->parents.end(), par->cls) == rule->parents.end()) {
    return NV_ERR_INVALID_OBJECT_PARENT;
  }
  if (size != rule->params_size) return NV_ERR_INVALID_ARGUMENT;

  RmObject o;
  o.cls = cls;
  o.parent = parent;
  o.space = par->space;
  switch (cls) {
    case NV01_DEVICE_0: {
      auto* d = static_cast<Nv0080AllocParams*>(params);
      if (d->deviceId != 0) return NV_ERR_INVALID_ARGUMENT;
      o.space = std::make_shared<AddressSpace>(0x1000, 1ull << 57);
      break;
    }
    case NV20_SUBDEVICE_0:
      if (static_cast<Nv2080AllocParams*>(params)->subDeviceId != 0) return NV_ERR_INVALID_ARGUMENT;
      break;
    case NV01_MEMORY_LOCAL_USER:
    case NV01_MEMORY_SYSTEM: {
      auto* m = static_cast<NvMemoryAllocationParams*>(params);
      if (m->size == 0 || (m->alignment & (m->alignment - 1)) != 0 ||
          (m->limit != 0 && m->limit != m->size - 1)) {
        return NV_ERR_INVALID_ARGUMENT;
      }
      if (m->size > kVideoMemory) return NV_ERR_NO_MEMORY;
      o.memory =
          MemoryObject::create(m->size, cls == NV01_MEMORY_SYSTEM ? "RM sysmem" : "RM vidmem");
      m->limit = m->size - 1;
      break;
    }
    case FERMI_VASPACE_A:
      o.externally_owned = (static_cast<NvVaspaceAllocationParams*>(params)->flags &
                            NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED) != 0;
      break;
    case KEPLER_CHANNEL_GROUP_A:
      if (static_cast<NvChannelGroupAllocationParams*>(params)->engineType !=
          NV2080_ENGINE_TYPE_GRAPHICS) {
        return NV_ERR_INVALID_ARGUMENT;
      }
      o.group = std::make_shared<ChannelGroup>();
      break;
    case FERMI_CONTEXT_SHARE_A: {
      NvHandle vas = static_cast<NvCtxshareAllocationParams*>(params)->hVASpace;
      if (vas != 0 && (find(vas) == nullptr || find(vas)->cls != FERMI_VASPACE_A)) {
        return NV_ERR_INVALID_OBJECT_HANDLE;
      }
      break;
    }
    case HOPPER_CHANNEL_GPFIFO_A:
      if (uint32_t s = make_channel(o, *static_cast<NvChannelAllocParams*>(params)); s != NV_OK)
        return s;
      break;
    case HOPPER_USERMODE_A:
      o.memory = MemoryObject::create(0x10000, "RM usermode doorbell page");
      machine_.engine().add_doorbell(o.memory, 0x90);
      break;
    case HOPPER_COMPUTE_A:
    case HOPPER_DMA_COPY_A:
      par->channel->add_class(cls);
      break;
    case GT200_DEBUGGER: {
      auto* d = static_cast<Nv83deAllocParams*>(params);
      RmObject* target = find(d->hClass3dObject);
      if (find(d->hAppClient) == nullptr || target == nullptr || target->cls != HOPPER_COMPUTE_A) {
        return NV_ERR_INVALID_ARGUMENT;
      }
      break;
    }
    default:
      break;
  }
  o.handle = *out != 0 ? *out : new_handle();
  *out = o.handle;
  find(parent)->children.push_back(o.handle);
  objects_[o.handle] = std::move(o);
  return NV_OK;
}

uint32_t RmFrontEnd::make_channel(RmObject& o, const NvChannelAllocParams& p) {
  RmObject* error = find(p.hObjectError);
  RmObject* buffer = find(p.hObjectBuffer);
  RmObject* userd = find(p.hUserdMemory[0]);
  RmObject* share = find(p.hContextShare);
  if (error == nullptr || !error->memory || buffer == nullptr || !buffer->memory ||
      userd == nullptr || !userd->memory) {
    return NV_ERR_INVALID_OBJECT_HANDLE;
  }
  if (share == nullptr || share->cls != FERMI_CONTEXT_SHARE_A || share->parent != o.parent) {
    return NV_ERR_INVALID_OBJECT_HANDLE;
  }
  if (p.gpFifoEntries < 2 || (p.gpFifoEntries & (p.gpFifoEntries - 1)) != 0)
    return NV_ERR_INVALID_ARGUMENT;
  auto ring = o.space->lookup(p.gpFifoOffset);
  if (!ring || ring->object != buffer->memory ||
      p.gpFifoOffset + p.gpFifoEntries * 8ull > ring->va + ring->size) {
    return NV_ERR_INVALID_OFFSET;
  }
  if (p.userdOffset[0] + 512 > userd->memory->size()) return NV_ERR_INVALID_OFFSET;
  if (p.userdOffset[0] % 512 != 0) {
    // RM itself does not check: the runlist entry drops the low bits and the
    // GPU reads GP_PUT from the wrong place (a hang). The simulator refuses.
    machine_.log().line("NVRM (sim): USERD offset " + hex(p.userdOffset[0]) +
                        " is not 512-byte aligned");
    return NV_ERR_INVALID_OFFSET;
  }
  ChannelConfig c;
  c.token = next_token_++;
  c.name = "RM channel " + std::to_string(c.token);
  c.as = o.space;
  c.ring_va = p.gpFifoOffset;
  c.entries = p.gpFifoEntries;
  c.userd = userd->memory;
  c.userd_offset = p.userdOffset[0];
  c.spec = &spec_;
  c.group = find(o.parent)->group;
  std::shared_ptr<MemoryObject> notifier = error->memory;
  c.report = [this, notifier](const ChannelFault& f) { report(f, notifier); };
  o.channel = machine_.engine().add_channel(std::move(c));  // runs once the group is scheduled
  return NV_OK;
}

void RmFrontEnd::report(const ChannelFault& f, std::shared_ptr<MemoryObject> notifier) {
  uint32_t xid = 31;
  switch (f.kind) {
    case FaultKind::kMmu:
      xid = 31;
      break;
    case FaultKind::kPbdma:
    case FaultKind::kViolation:
      xid = 32;
      break;
    case FaultKind::kGraphics:
      xid = 13;
      break;
    case FaultKind::kBadMethod:
      xid = 69;
      break;
  }
  {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    fault_va_ = f.va;
    fault_valid_ = true;
    fault_kind_ = f.kind;
  }
  machine_.log().line("NVRM: Xid (PCI:0000:1b:00): " + std::to_string(xid) + ", " + f.what);
  auto* n = reinterpret_cast<NvNotification*>(notifier->host());
  uint64_t ns = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  n->time_stamp[0] = static_cast<uint32_t>(ns);
  n->time_stamp[1] = static_cast<uint32_t>(ns >> 32);
  n->info32 = xid;
  n->info16 = 0;
  __atomic_store_n(&n->status, static_cast<uint16_t>(0xffff), __ATOMIC_RELEASE);
}

uint32_t RmFrontEnd::alloc_memory(Nvos02* p) {
  RmObject* root = find(p->hRoot);
  if (root == nullptr || root->cls != NV01_ROOT_CLIENT) return NV_ERR_INVALID_CLIENT;
  RmObject* parent = find(p->hObjectParent);
  if (parent == nullptr || parent->cls != NV01_DEVICE_0) return NV_ERR_INVALID_OBJECT_PARENT;
  if (p->hClass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) return NV_ERR_INVALID_CLASS;
  if (p->hObjectNew == 0 || find(p->hObjectNew) != nullptr) return NV_ERR_INVALID_OBJECT_NEW;
  uint64_t size = p->limit + 1;
  if (p->pMemory == 0 || p->pMemory % 4096 != 0 || size % 4096 != 0) return NV_ERR_INVALID_ARGUMENT;
  // RM pins the pages: they must exist in this process.
  if (::msync(reinterpret_cast<void*>(p->pMemory), size, MS_ASYNC) != 0)
    return NV_ERR_INVALID_ADDRESS;
  RmObject o;
  o.handle = p->hObjectNew;
  o.parent = p->hObjectParent;
  o.cls = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
  o.space = parent->space;
  o.memory = MemoryObject::wrap(reinterpret_cast<void*>(p->pMemory), size, "RM OS descriptor");
  parent->children.push_back(o.handle);
  objects_[o.handle] = std::move(o);
  return NV_OK;
}

void RmFrontEnd::free_subtree(NvHandle h) {
  RmObject* o = find(h);
  if (o == nullptr) return;
  std::vector<NvHandle> children = o->children;
  for (NvHandle c : children) free_subtree(c);
  o = find(h);
  if (o->channel) machine_.engine().remove_channel(o->channel);
  if (o->cls == HOPPER_USERMODE_A) machine_.engine().remove_doorbell(o->memory);
  // Freed memory leaves the GPU's page tables.
  if (o->memory && o->space) o->space->unmap_object(o->memory.get());
  for (auto& weak : uvm_spaces_) {
    if (auto space = weak.lock()) space->channels.erase(h);
  }
  if (RmObject* parent = find(o->parent)) {
    auto& ch = parent->children;
    ch.erase(std::remove(ch.begin(), ch.end(), h), ch.end());
  }
  objects_.erase(h);
}

uint32_t RmFrontEnd::free(Nvos00* p) {
  RmObject* root = find(p->hRoot);
  if (root == nullptr || root->cls != NV01_ROOT_CLIENT) return NV_ERR_INVALID_CLIENT;
  RmObject* o = find(p->hObjectOld);
  if (o == nullptr) return NV_ERR_INVALID_OBJECT_HANDLE;
  if (o->parent != p->hObjectParent && o->cls != NV01_ROOT_CLIENT)
    return NV_ERR_INVALID_OBJECT_PARENT;
  free_subtree(p->hObjectOld);
  return NV_OK;
}

uint32_t RmFrontEnd::map_memory(Nvos33WithFd* w) {
  Nvos33& p = w->params;
  if (find(p.hClient) == nullptr || find(p.hClient)->cls != NV01_ROOT_CLIENT)
    return NV_ERR_INVALID_CLIENT;
  RmObject* dev = find(p.hDevice);
  RmObject* mem = find(p.hMemory);
  if (dev == nullptr || dev->cls != NV01_DEVICE_0 || mem == nullptr || !mem->memory) {
    return NV_ERR_INVALID_OBJECT_HANDLE;
  }
  if (p.length == 0 || p.offset + p.length > mem->memory->size()) return NV_ERR_INVALID_LIMIT;
  auto f = std::dynamic_pointer_cast<RmNodeFile>(machine_.file(w->fd));
  // System memory maps through the control node; video memory and the usermode
  // page through a GPU node registered with the control node.
  bool system = mem->cls == NV01_MEMORY_SYSTEM;
  if (!f || f->ctl() != system || (!system && !f->registered)) return NV_ERR_INVALID_ARGUMENT;
  f->pending = mem->memory;
  f->pending_length = p.length;
  f->pending_offset = p.offset;
  p.pLinearAddress = p.offset;
  return NV_OK;
}

uint32_t RmFrontEnd::map_memory_dma(Nvos46* p) {
  if (find(p->hClient) == nullptr) return NV_ERR_INVALID_CLIENT;
  RmObject* dma = find(p->hDma);
  RmObject* mem = find(p->hMemory);
  if (dma == nullptr || dma->cls != NV01_MEMORY_VIRTUAL || mem == nullptr || !mem->memory) {
    return NV_ERR_INVALID_OBJECT_HANDLE;
  }
  if (p->length == 0 || p->offset + p->length > mem->memory->size()) return NV_ERR_INVALID_OFFSET;
  if ((p->flags & NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE) == 0 || p->dmaOffset % 4096 != 0) {
    return NV_ERR_INVALID_ARGUMENT;  // nvhcq always chooses the address
  }
  // The VA space belongs to UVM: the address must lie in an external range.
  UvmVaSpace* space = uvm_space_of(device_of(p->hDma));
  if (space == nullptr) return NV_ERR_INVALID_ADDRESS;
  auto r = space->external_ranges.upper_bound(p->dmaOffset);
  if (r == space->external_ranges.begin() ||
      std::prev(r)->first + std::prev(r)->second < p->dmaOffset + p->length) {
    return NV_ERR_INVALID_ADDRESS;
  }
  return NV_OK;
}

}  // namespace nvhcq::sim
