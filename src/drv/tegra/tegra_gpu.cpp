// TegraGpu: opening the GPU (characteristics, address space, TSG and subcontext,
// the usermode doorbell page) and closing it.

#include "drv/tegra/tegra_gpu.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "drv/tegra/nvgpu_abi.h"
#include "drv/tegra/nvmap_abi.h"

namespace nvhcq::drv::tegra {
namespace {

// The address space nvhcq asks for: all of the GPU's VA bits, less a 2 MiB PDE
// at each end (the kernel wants PDE-aligned, nonzero bounds).
constexpr uint64_t kPdeBytes = 2ull << 20;

std::string hex64(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// "R36 (release), REVISION: 4.4" -> "L4T R36.4.4", when /etc/nv_tegra_release says so.
std::string l4t_release() {
  std::string text;
  if (!sys().read_file("/etc/nv_tegra_release", &text)) return {};
  auto r = text.find('R');
  auto rev = text.find("REVISION: ");
  if (r == std::string::npos || rev == std::string::npos) return {};
  std::string major = text.substr(r, text.find(' ', r) - r);
  std::string minor = text.substr(rev + 10, text.find(',', rev) - rev - 10);
  return "L4T " + major + "." + minor;
}

}  // namespace

bool TegraGpu::present(const TegraGpuOptions& options) {
  return sys().exists(options.ctrl_path) && sys().exists(options.nvmap_path);
}

void TegraGpu::ioctl_or_throw(int fd, unsigned long request, void* arg, const char* what) {
  if (sys().ioctl(fd, request, arg) == 0) return;
  int err = errno;
  char req[32];
  std::snprintf(req, sizeof(req), "ioctl 0x%lx", request);
  std::string text = std::string(what) + " failed: " + std::strerror(err);
  if (err == ENOMEM) throw OutOfMemoryError(text, req, err, "free GPU memory or allocate less");
  std::string hint;
  if (err == ENOTTY)
    hint = "the kernel does not know this ioctl or its struct size (is this L4T r36?)";
  throw Error(text, req, err, hint);
}

TegraGpu::TegraGpu(const TegraGpuOptions& options) : options_(options) {
  nvmap_ = open_or_throw(options_.nvmap_path, O_RDWR);
  ctrl_ = open_or_throw(options_.ctrl_path, O_RDWR);
  query_characteristics();
  create_address_space();
  create_tsg();
  map_usermode_region();
  log::info("opened ", info_.name, " (", info_.arch(), ") through nvgpu");
}

void TegraGpu::query_characteristics() {
  NvgpuGpuCharacteristics c{};
  NvgpuGpuGetCharacteristics get{};
  get.gpu_characteristics_buf_size = sizeof(c);
  get.gpu_characteristics_buf_addr = reinterpret_cast<uint64_t>(&c);
  ioctl_or_throw(ctrl_.get(), NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, &get, "GET_CHARACTERISTICS");
  if (get.gpu_characteristics_buf_size < offsetof(NvgpuGpuCharacteristics, max_gpfifo_entries)) {
    throw Error("nvgpu returned only " + std::to_string(get.gpu_characteristics_buf_size) +
                    " bytes of GPU characteristics: this kernel is older than L4T r36",
                "GET_CHARACTERISTICS");
  }
  if ((c.flags & NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT) == 0) {
    throw Error("this nvgpu does not offer usermode submit, which nvhcq needs",
                "GET_CHARACTERISTICS", 0, "nvhcq supports Jetson Orin with L4T r36 (JetPack 6)");
  }
  char chip[9] = {0};
  std::memcpy(chip, c.chipname, 8);
  info_.name = std::string("Jetson iGPU ") + chip;
  info_.driver_version = "nvgpu";
  std::string l4t = l4t_release();
  if (!l4t.empty()) info_.driver_version += " (" + l4t + ")";
  info_.uuid = "TEGRA-" + hex64(c.per_device_identifier);
  info_.sm_version = c.sm_arch_sm_version;
  info_.compute_class = c.compute_class;
  info_.dma_class = c.dma_copy_class;
  info_.gpfifo_class = c.gpfifo_class;
  info_.num_gpcs = c.num_gpc;
  info_.tpc_per_gpc = c.num_tpc_per_gpc;
  info_.max_warps_per_sm = c.sm_arch_warp_count;
  info_.memory_bytes = 0;  // unified: the GPU uses system memory
  info_.va_limit = 1ull << (c.gpu_va_bit_count != 0 ? c.gpu_va_bit_count : 40);
  info_.unified_memory = true;

  std::vector<uint32_t> masks(c.num_gpc != 0 ? c.num_gpc : 1, 0);
  NvgpuGpuGetTpcMasks tpc{};
  tpc.mask_buf_size = static_cast<uint32_t>(masks.size() * sizeof(uint32_t));
  tpc.mask_buf_addr = reinterpret_cast<uint64_t>(masks.data());
  ioctl_or_throw(ctrl_.get(), NVGPU_GPU_IOCTL_GET_TPC_MASKS, &tpc, "GET_TPC_MASKS");
  for (uint32_t m : masks) info_.tpc_count += static_cast<uint32_t>(__builtin_popcount(m));
  // SMs per TPC: the SM count over the TPC count (2 on ga10b), not a guess.
  NvgpuGpuNumVsms vsms{};
  ioctl_or_throw(ctrl_.get(), NVGPU_GPU_IOCTL_NUM_VSMS, &vsms, "NUM_VSMS");
  if (info_.tpc_count == 0 || vsms.num_vsms % info_.tpc_count != 0) {
    throw Error("nvgpu reports " + std::to_string(vsms.num_vsms) + " SMs on " +
                    std::to_string(info_.tpc_count) + " TPCs",
                "NUM_VSMS");
  }
  info_.sm_per_tpc = vsms.num_vsms / info_.tpc_count;
}

void TegraGpu::create_address_space() {
  // Big pages off (4 KiB GPU pages for everything), one unified range, the
  // kernel choosing addresses: what CUDA asks for on Orin.
  va_start_ = kPdeBytes;
  va_end_ = info_.va_limit - kPdeBytes;
  NvgpuAllocAsArgs as{};
  as.big_page_size = 0;
  as.flags = NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA;
  as.va_range_start = va_start_;
  as.va_range_end = va_end_;
  ioctl_or_throw(ctrl_.get(), NVGPU_GPU_IOCTL_ALLOC_AS, &as, "ALLOC_AS");
  as_ = Fd(as.as_fd);
}

void TegraGpu::create_tsg() {
  NvgpuGpuOpenTsgArgs t{};
  ioctl_or_throw(ctrl_.get(), NVGPU_GPU_IOCTL_OPEN_TSG, &t, "OPEN_TSG");
  tsg_ = Fd(static_cast<int>(t.tsg_fd));
  // Compute runs in an async subcontext (a VEID of its own); both channels share it.
  NvgpuTsgCreateSubcontextArgs sub{};
  sub.type = NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC;
  sub.as_fd = as_.get();
  ioctl_or_throw(tsg_.get(), NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, &sub, "CREATE_SUBCONTEXT");
  veid_ = sub.veid;
}

void TegraGpu::map_usermode_region() {
  void* p =
      sys().mmap(nullptr, kUsermodeRegionBytes, PROT_READ | PROT_WRITE, MAP_SHARED, ctrl_.get(), 0);
  check_errno(p != MAP_FAILED, "map the usermode doorbell region of " + options_.ctrl_path, "mmap");
  usermode_ = static_cast<volatile uint32_t*>(p);
}

TegraGpu::~TegraGpu() {
  // Channels first (closing a channel fd unbinds and frees it in the kernel), then
  // their rings, then memory; the address space and TSG go with their fds.
  for (Channel* ch : {&compute_, &copy_}) {
    ch->fd.reset();
    nvmap_free(ch->gpfifo);
    nvmap_free(ch->userd);
  }
  std::vector<NvmapBuffer> remaining;
  {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    for (auto& [va, b] : live_) remaining.push_back(b);
    live_.clear();
  }
  for (auto& b : remaining) {
    try {
      gpu_unmap(b.gpu_va);
    } catch (const Error& e) {
      log::warn("while closing the GPU: ", e.what());
    }
    nvmap_free(b);
  }
  nvmap_free(notifier_);
  if (usermode_ != nullptr) sys().munmap(const_cast<uint32_t*>(usermode_), kUsermodeRegionBytes);
}

}  // namespace nvhcq::drv::tegra
