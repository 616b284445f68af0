#pragma once
// The simulated Jetson: nvgpu's ctrl node (/dev/nvgpu/igpu0/ctrl) and the
// address-space, TSG and channel fds it hands out, and nvmap (/dev/nvmap) with
// its dma-buf fds, for an Orin ga10b (SM 8.7, 2 GPCs x 4 TPCs x 2 SMs, 40-bit
// VA, no big pages, unified memory). Each ioctl is checked as the L4T r36
// kernel checks it: wrong request size -> ENOTTY, bad magic or number -> EINVAL,
// bad fields -> the errno the kernel returns. The simulator is stricter in one
// place: nvmap refuses untagged allocations (the kernel only warns).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "drv/tegra/nvgpu_abi.h"
#include "drv/tegra/nvmap_abi.h"
#include "sim/sim_engine.h"
#include "sim/sim_machine.h"

namespace nvhcq::sim {

// An nvmap handle: pages (after ALLOC, or the caller's with FROM_VA) and flags.
struct NvmapBuffer {
  uint32_t id = 0;
  uint64_t size = 0;
  uint32_t heap_mask = 0, flags = 0, align = 0;
  std::shared_ptr<MemoryObject> memory;  // null until allocated
};

struct NvmapAllocRecord {
  uint64_t size;
  uint32_t heap_mask, flags, align;
  bool from_va;
};

class TegraFrontEnd final : public FrontEnd {
 public:
  static constexpr const char* kCtrlPath = "/dev/nvgpu/igpu0/ctrl";
  static constexpr const char* kNvmapPath = "/dev/nvmap";
  static constexpr uint32_t kNumSms = 16;

  explicit TegraFrontEnd(SimMachine& machine);
  std::vector<std::string> nodes() const override;
  std::shared_ptr<SimFile> open(const std::string& path, int* err) override;
  std::map<std::string, std::string> files() const override;

  SimMachine& machine() { return machine_; }
  const GpuSpec& spec() const { return spec_; }
  drv::tegra::NvgpuGpuCharacteristics characteristics() const;
  const std::shared_ptr<MemoryObject>& usermode_page() const { return usermode_; }
  uint32_t next_token() { return token_counter_++; }
  uint64_t next_object_id() { return object_counter_++; }

  // For tests: what nvmap was asked for, and the address spaces made.
  void record_alloc(const NvmapAllocRecord& r);
  std::vector<NvmapAllocRecord> allocs() const;
  void note_address_space(std::shared_ptr<AddressSpace> as);
  std::shared_ptr<AddressSpace> last_address_space() const;
  void clear_records();

 private:
  SimMachine& machine_;
  GpuSpec spec_;
  std::shared_ptr<MemoryObject> usermode_;
  uint32_t token_counter_ = 0x1000;
  uint64_t object_counter_ = 1;
  mutable std::mutex mutex_;
  std::vector<NvmapAllocRecord> allocs_;
  std::weak_ptr<AddressSpace> last_as_;
};

// ---- the files ----

class NvmapFile;
class ChannelFile;

class DmabufFile final : public SimFile {
 public:
  explicit DmabufFile(std::shared_ptr<NvmapBuffer> buffer) : buffer_(std::move(buffer)) {}
  int ioctl(unsigned long, void*) override { return -ENOTTY; }
  void* mmap(void* addr, size_t length, int prot, int flags, off_t offset, int* err) override;
  const std::shared_ptr<NvmapBuffer>& buffer() const { return buffer_; }

 private:
  std::shared_ptr<NvmapBuffer> buffer_;
};

class NvmapFile final : public SimFile {
 public:
  explicit NvmapFile(TegraFrontEnd& fe) : fe_(fe) {}
  int ioctl(unsigned long request, void* arg) override;

 private:
  int create(unsigned long request, drv::tegra::NvmapCreateHandle* a);
  int alloc(drv::tegra::NvmapAllocHandle* a);
  int from_va(drv::tegra::NvmapCreateHandleFromVa* a);
  int get_fd(drv::tegra::NvmapCreateHandle* a);
  bool tag_ok(uint32_t flags, const char* what);

  TegraFrontEnd& fe_;
  std::mutex mutex_;
  std::map<uint32_t, std::shared_ptr<NvmapBuffer>> handles_;
  uint32_t next_id_ = 0x1001;
};

class AsFile final : public SimFile {
 public:
  AsFile(TegraFrontEnd& fe, uint64_t start, uint64_t end);
  ~AsFile() override;
  int ioctl(unsigned long request, void* arg) override;
  const std::shared_ptr<AddressSpace>& space() const { return as_; }
  // Maps a buffer where the kernel's allocator puts it (top down); 0 if full.
  uint64_t map_anywhere(const std::shared_ptr<NvmapBuffer>& b, bool cacheable);
  void unmap(uint64_t va);

 private:
  int alloc_space(drv::tegra::NvgpuAsAllocSpaceArgs* a);
  int map_buffer_ex(drv::tegra::NvgpuAsMapBufferExArgs* a);

  TegraFrontEnd& fe_;
  std::shared_ptr<AddressSpace> as_;
  std::mutex mutex_;
  std::map<uint64_t, std::shared_ptr<NvmapBuffer>> mapped_;  // keeps buffers alive while mapped
};

class TsgFile final : public SimFile {
 public:
  explicit TsgFile(TegraFrontEnd& fe) : fe_(fe), group_(std::make_shared<ChannelGroup>()) {}
  int ioctl(unsigned long request, void* arg) override;
  const std::shared_ptr<ChannelGroup>& group() const { return group_; }
  // The SM error state the kernel keeps for the TSG (set when a launch faults).
  void record_sm_error(uint32_t global_esr, uint32_t warp_esr);

 private:
  TegraFrontEnd& fe_;
  std::shared_ptr<ChannelGroup> group_;
  std::mutex mutex_;
  std::map<uint32_t, std::shared_ptr<AddressSpace>> subcontexts_;  // veid -> AS
  uint32_t next_veid_ = 1;
  uint32_t sm_global_esr_ = 0, sm_warp_esr_ = 0;
};

class ChannelFile final : public SimFile {
 public:
  explicit ChannelFile(TegraFrontEnd& fe) : fe_(fe) {}
  ~ChannelFile() override;
  int ioctl(unsigned long request, void* arg) override;

  // Set by the AS and TSG files when they bind the channel.
  std::shared_ptr<AsFile> as;
  std::shared_ptr<TsgFile> tsg;
  uint32_t veid = 0;

 private:
  int setup_bind(drv::tegra::NvgpuChannelSetupBindArgs* a);
  int alloc_obj_ctx(drv::tegra::NvgpuAllocObjCtxArgs* a);
  int set_error_notifier(drv::tegra::NvgpuSetErrorNotifier* a);

  TegraFrontEnd& fe_;
  bool wdt_enabled_ = true;
  std::vector<uint32_t> classes_;
  std::shared_ptr<NvmapBuffer> gpfifo_, userd_;
  uint64_t gpfifo_va_ = 0;
  std::shared_ptr<SimChannel> channel_;
  // The error notifier, shared with the fault callback (the GPU thread).
  struct Notifier {
    std::mutex mutex;
    std::shared_ptr<NvmapBuffer> buffer;
    uint64_t offset = 0;
  };
  std::shared_ptr<Notifier> notifier_ = std::make_shared<Notifier>();
  // Writes the nvgpu notification as the kernel does when it recovers a channel.
  static void report(Notifier& notifier, const std::shared_ptr<TsgFile>& tsg,
                     const ChannelFault& f);
};

// The request checks every nvgpu node does first: magic, number range, size.
int check_nvgpu_request(unsigned long request, char magic, uint32_t last_nr, uint32_t max_size);

}  // namespace nvhcq::sim
