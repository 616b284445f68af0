// nvhcq info: what this machine offers nvhcq. Every probe that fails says why
// and the command still prints the rest.

#include <cstdio>
#include <string>

#include "app/commands.h"
#include "base/args.h"
#include "base/error.h"
#include "base/version.h"
#include "compile/nvrtc_api.h"
#include "cpu/cpu_info.h"
#include "cuda/cuda_api.h"
#include "drv/probe.h"
#include "drv/rm/rm_gpu.h"
#include "drv/tegra/tegra_gpu.h"

namespace nvhcq::app {
namespace {

const char* yes_no(bool b) { return b ? "present" : "absent"; }

void print_cpu() {
  const auto& c = cpu::cpu_info();
  std::printf("CPU:      %s (%s, %d threads;", c.model.c_str(), c.arch.c_str(), c.logical_cores);
  if (c.avx512f) std::printf(" avx512f");
  if (c.avx2) std::printf(" avx2");
  if (c.fma) std::printf(" fma");
  if (c.f16c) std::printf(" f16c");
  if (c.neon) std::printf(" neon");
  std::printf(")\n");
}

void print_driver_nodes(const drv::DriverNodes& n) {
  std::printf("Driver interfaces:\n");
  std::printf("  RM (nvidia.ko):       /dev/nvidiactl %s, /dev/nvidia-uvm %s, GPU nodes:",
              yes_no(n.rm_ctl), yes_no(n.rm_uvm));
  if (n.rm_gpus.empty()) std::printf(" none");
  for (const auto& g : n.rm_gpus) std::printf(" %s", g.c_str());
  std::printf("\n");
  if (!n.rm_version.empty()) std::printf("    %s\n", n.rm_version.c_str());
  std::printf("  Tegra (nvgpu+nvmap):  /dev/nvgpu/igpu0/ctrl %s, /dev/nvmap %s\n",
              yes_no(n.tegra_ctrl), yes_no(n.tegra_nvmap));
  if (!n.has_any_gpu()) {
    std::printf("  No NVIDIA GPU driver is present on this machine: GPU backends are unavailable,"
                " the CPU backend is used.\n");
  }
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof(b), "0x%x", v);
  return b;
}

// Opens every GPU the RM driver lists, as the nv backend does, and says what it found.
void print_rm_gpus() {
  int count = 0;
  try {
    count = drv::rm::RmGpu::count();
  } catch (const Error& e) {
    std::printf("  RM driver: cannot be opened: %s\n", e.what());
    return;
  }
  for (int i = 0; i < count; ++i) {
    try {
      drv::rm::RmGpu gpu(i);
      const auto& g = gpu.info();
      const auto& c = gpu.classes();
      std::printf("  nv:%d  %s, %s (SM version %s), %u SMs (of %u GPCs x %u TPCs x %u SMs), %.1f GiB\n",
                  i, g.name.c_str(), g.arch().c_str(), hex(g.sm_version).c_str(), g.sm_count(),
                  g.num_gpcs, g.tpc_per_gpc, g.sm_per_tpc,
                  static_cast<double>(g.memory_bytes) / (1ull << 30));
      std::printf("        driver %s, %s\n", g.driver_version.c_str(), g.uuid.c_str());
      std::printf("        classes: gpfifo %s, compute %s, copy %s, usermode %s\n",
                  hex(c.gpfifo).c_str(), hex(c.compute).c_str(), hex(c.dma).c_str(),
                  hex(c.usermode).c_str());
    } catch (const Error& e) {
      std::printf("  nv:%d  cannot be opened: %s\n", i, e.what());
    }
  }
}

// Opens the Jetson's integrated GPU through nvgpu, as the nv backend does there.
void print_tegra_gpu() {
  try {
    drv::tegra::TegraGpu gpu;
    const auto& g = gpu.info();
    std::printf("  nv:0  %s, %s (SM version %s), %u SMs (of %u GPCs x %u TPCs x %u SMs), unified memory\n",
                g.name.c_str(), g.arch().c_str(), hex(g.sm_version).c_str(), g.sm_count(), g.num_gpcs,
                g.tpc_per_gpc, g.sm_per_tpc);
    std::printf("        driver %s, %u-bit GPU VA\n", g.driver_version.c_str(),
                static_cast<unsigned>(__builtin_ctzll(g.va_limit)));
    std::printf("        classes: gpfifo %s, compute %s, copy %s\n", hex(g.gpfifo_class).c_str(),
                hex(g.compute_class).c_str(), hex(g.dma_class).c_str());
  } catch (const Error& e) {
    std::printf("  nv:0  cannot be opened: %s\n", e.what());
  }
}

void print_nvrtc() {
  try {
    const auto& api = compile::nvrtc();
    std::printf("NVRTC:    %d.%d (%s)\n", api.major, api.minor, api.path.c_str());
  } catch (const Error& e) {
    std::printf("NVRTC:    not available: %s\n", e.what());
  }
}

void print_libcuda() {
  try {
    const auto& api = cuda::cuda();
    int count = 0;
    api.cuDeviceGetCount(&count);
    std::printf("libcuda:  CUDA %d.%d driver API (%s), %d device(s)\n", api.driver_version / 1000,
                (api.driver_version % 1000) / 10, api.path.c_str(), count);
    for (int i = 0; i < count; ++i) {
      cuda::CUdevice dev;
      char name[256] = {0};
      int major = 0, minor = 0, sms = 0;
      size_t mem = 0;
      api.cuDeviceGet(&dev, i);
      api.cuDeviceGetName(name, sizeof(name), dev);
      api.cuDeviceGetAttribute(&major, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      api.cuDeviceGetAttribute(&minor, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      api.cuDeviceGetAttribute(&sms, cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      api.cuDeviceTotalMem(&mem, dev);
      std::printf("  cuda:%d  %s, sm_%d%d, %d SMs, %.1f GiB\n", i, name, major, minor, sms,
                  static_cast<double>(mem) / (1ull << 30));
    }
  } catch (const Error& e) {
    std::printf("libcuda:  not available: %s\n", e.what());
  }
}

}  // namespace

int run_info(const Args& args) {
  ArgParser parser("nvhcq info",
                   "Describe this machine: the CPU, the NVIDIA driver interfaces present, the\n"
                   "GPUs, and the NVRTC and libcuda versions when they can be loaded.");
  auto parsed = parser.parse(args);
  if (parsed.help_requested()) {
    std::printf("%s", parser.usage().c_str());
    return 0;
  }
  std::printf("nvhcq %s\n", NVHCQ_VERSION);
  print_cpu();
  auto nodes = drv::probe_driver_nodes();
  print_driver_nodes(nodes);
  if (nodes.has_tegra()) {
    std::printf("GPU through nvgpu (the direct nv path on Jetson):\n");
    print_tegra_gpu();
  } else if (nodes.has_rm()) {
    std::printf("GPUs through RM (the direct nv path):\n");
    print_rm_gpus();
  }
  print_nvrtc();
  print_libcuda();
  return 0;
}

}  // namespace nvhcq::app
