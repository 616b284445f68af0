#pragma once
// The "cuda" Accelerator (CUDA driver API) and the backends by name.

#include <memory>
#include <string>

#include "gpu/accelerator.h"

namespace nvhcq::cuda {

// The CUDA driver API on GPU `index`; throws Error when libcuda or the GPU is missing.
std::unique_ptr<gpu::Accelerator> open_cuda(int index = 0);
// "nv" (nvhcq's direct path) or "cuda".
std::unique_ptr<gpu::Accelerator> open_accelerator(const std::string& backend, int index = 0);

}  // namespace nvhcq::cuda
