#include "support/gpu_env.h"

#include "cuda/cuda_api.h"
#include "drv/probe.h"

namespace nvhcq::testing {

bool has_rm_gpu() { return drv::probe_driver_nodes().has_rm(); }

bool has_cuda() { return cuda::cuda_available(); }

std::string no_gpu_reason() {
  auto n = drv::probe_driver_nodes();
  if (!n.rm_ctl) return "no NVIDIA GPU driver here (/dev/nvidiactl is absent)";
  if (n.rm_gpus.empty()) return "no NVIDIA GPU node (/dev/nvidiaN) here";
  return "NVIDIA GPU not usable here";
}

}  // namespace nvhcq::testing
