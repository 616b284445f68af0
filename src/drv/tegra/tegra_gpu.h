#pragma once
// The Jetson GPU (Orin's ga10b) opened through nvgpu + nvmap: DriverIface for
// Tegra. Owns the ctrl node, the GPU address space, one TSG with an async
// subcontext, the usermode doorbell page, the compute and copy channels (made on
// first use, so the shader windows are reserved before anything is mapped) and
// the memory it hands out.
//
// Memory is unified: every allocation is nvmap IOVMM memory, CPU-mapped
// (cacheable; the SoC is IO-coherent) and mapped into the GPU VA space at an
// address the kernel chooses. The runtime copies to and from it with memcpy.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "drv/driver_iface.h"
#include "drv/sys.h"

namespace nvhcq::drv::tegra {

struct TegraGpuOptions {
  std::string ctrl_path = "/dev/nvgpu/igpu0/ctrl";
  std::string nvmap_path = "/dev/nvmap";
};

class TegraGpu final : public DriverIface {
 public:
  // True when this machine has the nvgpu ctrl node and nvmap (a Jetson).
  static bool present(const TegraGpuOptions& options = {});
  explicit TegraGpu(const TegraGpuOptions& options = {});
  ~TegraGpu() override;

  const GpuInfo& info() const override { return info_; }
  Allocation alloc(size_t size, const MemFlags& flags) override;
  void free(Allocation& allocation) override;
  Allocation map_host(void* ptr, size_t size) override;
  void reserve_va(uint64_t base, uint64_t size) override;
  ChannelHandles open_channel(Engine engine, uint32_t ring_entries) override;
  std::string channel_error() override;
  std::string fault_report() override;

  // The address space the GPU uses: [va_start, va_end).
  uint64_t va_start() const { return va_start_; }
  uint64_t va_end() const { return va_end_; }

 private:
  // nvmap memory mapped for the CPU, and for the GPU when gpu_va != 0.
  struct NvmapBuffer {
    uint32_t handle = 0;
    void* cpu = nullptr;
    uint64_t size = 0;
    uint64_t gpu_va = 0;
    bool user_pages = false;  // made by map_host(): the caller owns the pages
  };
  struct Channel {
    Fd fd;
    NvmapBuffer gpfifo, userd;
    ChannelHandles handles;
    uint64_t notifier_offset = 0;
  };

  void query_characteristics();
  void create_address_space();
  void create_tsg();
  void map_usermode_region();
  void create_notifier();
  Channel create_channel(Engine engine, uint32_t entries);

  // nvmap: a handle with pages (CREATE_64 + ALLOC), its dma-buf fd, CPU mapping.
  NvmapBuffer nvmap_alloc(uint64_t size, uint32_t cache_flags);
  Fd nvmap_dmabuf(uint32_t handle);
  void nvmap_free(NvmapBuffer& buffer);
  // MAP_BUFFER_EX of the handle's dma-buf at an address the kernel chooses.
  uint64_t gpu_map(uint32_t handle, bool gpu_cached);
  void gpu_unmap(uint64_t gpu_va);
  // An ioctl through the seam; throws Error (OutOfMemoryError for ENOMEM) naming it.
  void ioctl_or_throw(int fd, unsigned long request, void* arg, const char* what);

  TegraGpuOptions options_;
  GpuInfo info_;
  Fd nvmap_, ctrl_, as_, tsg_;
  uint32_t veid_ = 0;
  uint64_t va_start_ = 0, va_end_ = 0;
  volatile uint32_t* usermode_ = nullptr;
  NvmapBuffer notifier_;
  Channel compute_, copy_;
  bool compute_open_ = false, copy_open_ = false;
  std::vector<std::pair<uint64_t, uint64_t>> reservations_;

  std::mutex alloc_mutex_;
  std::map<uint64_t, NvmapBuffer> live_;  // gpu_va -> buffer, for leak-free teardown
};

}  // namespace nvhcq::drv::tegra
