#pragma once
// One GPU opened through RM + UVM: DriverIface for desktop and datacenter GPUs.
// Owns the RM object tree of the GPU (device, subdevice, VA space, usermode
// doorbell page, channel group, context share, the compute and copy channels
// with their engine objects, the debugger object) and the memory it hands out.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "drv/driver_iface.h"
#include "drv/rm/rm_abi.h"
#include "drv/rm/rm_params.h"
#include "drv/rm/uvm_abi.h"
#include "drv/rm/uvm_space.h"
#include "drv/sys.h"
#include "drv/va_allocator.h"

namespace nvhcq::drv::rm {

// The RM classes a GPU lists that nvhcq drives, newest first in each role.
struct ClassChoice {
  uint32_t usermode = 0, gpfifo = 0, compute = 0, dma = 0;
};
// Picks the newest supported class of each role from a GPU's class list; throws
// Error naming what is missing (e.g. a compute class nvhcq has no QMD layout for).
ClassChoice choose_classes(const std::vector<uint32_t>& class_list);

struct RmGpuOptions {
  uint32_t compute_ring_entries = 0x10000;
  uint32_t copy_ring_entries = 0x10000;
};

class RmGpu final : public DriverIface {
 public:
  // Number of GPUs the RM driver lists (0 when the driver is absent).
  static int count();
  explicit RmGpu(int index, const RmGpuOptions& options = {});
  ~RmGpu() override;

  const GpuInfo& info() const override { return info_; }
  Allocation alloc(size_t size, const MemFlags& flags) override;
  void free(Allocation& allocation) override;
  Allocation map_host(void* ptr, size_t size) override;
  void reserve_va(uint64_t base, uint64_t size) override;
  ChannelHandles open_channel(Engine engine, uint32_t ring_entries) override;
  std::string channel_error() override;
  std::string fault_report() override;

  const ClassChoice& classes() const { return classes_; }
  const std::vector<uint32_t>& class_list() const { return class_list_; }

 private:
  struct Channel {
    NvHandle gpfifo = 0, engine_object = 0;
    ChannelHandles handles;
    uint64_t ring_offset = 0;  // inside gpfifo_area_
  };

  void open_device(int index);
  void query_info();
  void setup_usermode();
  void setup_vaspace();
  void create_channels(const RmGpuOptions& options);
  Channel create_channel(Engine engine, uint32_t entries, uint64_t area_offset);
  void map_into_gpu(uint64_t va, uint64_t size, NvHandle memory);
  Allocation wrap_host_pages(void* ptr, size_t size, bool caller_owns);
  NvHandle alloc_sysmem_notifier(size_t size);

  GpuInfo info_;
  ClassChoice classes_;
  std::vector<uint32_t> class_list_;
  uint32_t gpu_id_ = 0, minor_ = 0;
  Fd gpu_fd_;
  std::optional<UvmSpace> uvm_;  // this device's own UVM VA space (opened with the RM VA space)
  NvUuid uuid_{};
  NvHandle device_ = 0, subdevice_ = 0, virtmem_ = 0, vaspace_ = 0, usermode_ = 0;
  NvHandle channel_group_ = 0, ctxshare_ = 0, debugger_ = 0, notifier_ = 0;
  volatile uint32_t* usermode_mmio_ = nullptr;
  volatile NvNotification* notifier_cpu_ = nullptr;
  uint64_t notifier_size_ = 0;
  Allocation gpfifo_area_;
  Channel compute_, copy_;
  bool compute_taken_ = false, copy_taken_ = false;

  // GPU VAs: CPU-visible memory lives at the same address for CPU and GPU, inside
  // a PROT_NONE reservation of this process; GPU-only memory lives above the
  // CPU's user address space, where nothing else can ever be mapped.
  uint8_t* cpu_window_ = nullptr;
  uint64_t cpu_window_size_ = 0;
  VaAllocator cpu_va_, gpu_va_;
  std::mutex alloc_mutex_;
  std::map<uint64_t, Allocation> live_;  // gpu_va -> allocation, for leak-free teardown
};

}  // namespace nvhcq::drv::rm
