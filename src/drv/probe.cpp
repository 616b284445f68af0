#include "drv/probe.h"

#include <algorithm>
#include <cctype>

#include "drv/sys.h"

namespace nvhcq::drv {

DriverNodes probe_driver_nodes() {
  Sys& s = sys();
  DriverNodes n;
  n.rm_ctl = s.exists("/dev/nvidiactl");
  n.rm_uvm = s.exists("/dev/nvidia-uvm");
  for (const auto& name : s.list_dir("/dev")) {
    if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
        std::all_of(name.begin() + 6, name.end(), [](char c) { return std::isdigit(c); })) {
      n.rm_gpus.push_back("/dev/" + name);
    }
  }
  std::sort(n.rm_gpus.begin(), n.rm_gpus.end());
  std::string text;
  if (s.read_file("/proc/driver/nvidia/version", &text)) {
    n.rm_version = text.substr(0, text.find('\n'));
  }
  n.tegra_ctrl = s.exists("/dev/nvgpu/igpu0/ctrl");
  n.tegra_nvmap = s.exists("/dev/nvmap");
  return n;
}

}  // namespace nvhcq::drv
