#pragma once
// The one interface between the HCQ runtime (gpu/) and a kernel driver. RM
// (nvidia.ko + UVM) and Tegra (nvgpu + nvmap) each implement it in their own
// terms; gpu/ never sees an ioctl, and drv/ never sees a pushbuffer.

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvhcq::drv {

struct GpuInfo {
  std::string name;               // "NVIDIA H100 80GB HBM3", "ga10b"
  std::string driver_version;     // "580.159.04"
  std::string uuid;               // "GPU-xxxxxxxx-..."
  uint32_t sm_version = 0;        // 0x900 Hopper, 0x807 Orin, 0x806 GA10x
  uint32_t compute_class = 0;     // e.g. 0xcbc0 HOPPER_COMPUTE_A
  uint32_t dma_class = 0;         // e.g. 0xc8b5 HOPPER_DMA_COPY_A
  uint32_t gpfifo_class = 0;      // e.g. 0xc86f HOPPER_CHANNEL_GPFIFO_A
  // The chip's maximal layout (what shader local memory must be sized for) ...
  uint32_t num_gpcs = 0, tpc_per_gpc = 0, sm_per_tpc = 0, max_warps_per_sm = 0;
  // ... and the TPCs this part actually has enabled.
  uint32_t tpc_count = 0;
  uint64_t memory_bytes = 0;      // device memory (0 on unified-memory Tegra)
  uint64_t va_limit = 0;          // highest usable GPU VA + 1 (1<<40 on Tegra)
  bool unified_memory = false;    // Tegra: CPU and GPU share DRAM

  // SMs that run work (132 on an H100/H200 SXM, out of the chip's 144).
  uint32_t sm_count() const {
    return (tpc_count != 0 ? tpc_count : num_gpcs * tpc_per_gpc) * sm_per_tpc;
  }
  // "sm_90", "sm_87": the NVRTC target for this GPU.
  std::string arch() const;
};

enum class MemLocation { kDevice, kHost };

struct MemFlags {
  MemLocation location = MemLocation::kDevice;
  bool cpu_access = false;  // the CPU needs a mapping (pushbuffers, signals, uploads)
  bool contiguous = false;  // physically contiguous (GPFIFO rings, USERD)
  bool gpu_cached = true;   // false for memory the CPU polls (signals in host memory)
};

struct Allocation {
  uint64_t gpu_va = 0;
  void* cpu = nullptr;  // CPU address when mapped for the CPU, else nullptr
  size_t size = 0;      // bytes, rounded up to the page size used
  MemLocation location = MemLocation::kDevice;
  uint64_t handle = 0;  // the driver's own handle for the memory
  bool wraps_user_memory = false;  // made by map_host(): the caller owns the pages

  bool valid() const { return size != 0; }
};

enum class Engine { kCompute, kCopy };

// What a queue needs to submit work: the GPFIFO ring, its GP_PUT/GP_GET words
// in USERD, the doorbell and the token to write there.
struct ChannelHandles {
  Engine engine = Engine::kCompute;
  uint64_t* ring = nullptr;          // CPU view of the GPFIFO entries
  uint32_t ring_entries = 0;
  volatile uint32_t* gp_put = nullptr;
  volatile uint32_t* gp_get = nullptr;
  volatile uint32_t* doorbell = nullptr;
  uint32_t token = 0;                // work-submit token written to the doorbell
  uint32_t engine_class = 0;         // the class bound on this channel's subchannel
  uint64_t id = 0;                   // driver handle, for fault reports
};

class DriverIface {
 public:
  virtual ~DriverIface() = default;
  virtual const GpuInfo& info() const = 0;
  // Allocates memory mapped into the GPU's VA space (and the CPU's, if asked).
  // Throws OutOfMemoryError when the device or driver is out of memory.
  virtual Allocation alloc(size_t size, const MemFlags& flags) = 0;
  virtual void free(Allocation& allocation) = 0;
  // Maps existing page-aligned host memory into the GPU VA space.
  virtual Allocation map_host(void* ptr, size_t size) = 0;
  // Keeps [base, base+size) of the GPU VA space out of every allocation
  // (the shader shared- and local-memory windows).
  virtual void reserve_va(uint64_t base, uint64_t size) = 0;
  virtual ChannelHandles open_channel(Engine engine, uint32_t ring_entries) = 0;
  // Non-empty when a channel has reported an error (RC notifier, Xid): a short
  // description the runtime raises. Cheap enough to poll while waiting.
  virtual std::string channel_error() = 0;
  // Everything the driver can tell about a fault: MMU fault address and type,
  // SM error state. Slow; called once when an error is raised.
  virtual std::string fault_report() = 0;
};

}  // namespace nvhcq::drv
