#pragma once
// What kernel-driver interfaces this machine offers, found by looking at device
// nodes and /proc, without opening anything.

#include <string>
#include <vector>

namespace nvhcq::drv {

struct DriverNodes {
  // RM (nvidia.ko): /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidiaN.
  bool rm_ctl = false;
  bool rm_uvm = false;
  std::vector<std::string> rm_gpus;
  std::string rm_version;  // first line of /proc/driver/nvidia/version, if present
  // Tegra (nvgpu + nvmap): /dev/nvgpu/igpu0/ctrl, /dev/nvmap.
  bool tegra_ctrl = false;
  bool tegra_nvmap = false;

  bool has_rm() const { return rm_ctl && !rm_gpus.empty(); }
  bool has_tegra() const { return tegra_ctrl && tegra_nvmap; }
  bool has_any_gpu() const { return has_rm() || has_tegra(); }
};

DriverNodes probe_driver_nodes();

}  // namespace nvhcq::drv
