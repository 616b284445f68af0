#pragma once
// KernelLoader: turns LaunchSpecs into loaded kernels for one accelerator. The
// NVRTC loader compiles each distinct source once per process (and once per
// machine through compile/'s on-disk cache), compiling the missing ones of a
// batch in parallel, and loads each entry point once. Tests substitute their own
// loader (the host emulator compiles the same CUDA C as C++).
//
// NVHCQ_DUMP_KERNELS=<dir> writes every source it compiles to <dir>.

#include <memory>
#include <string>
#include <vector>

#include "gpu/accelerator.h"
#include "tensor/gpu/launch_spec.h"

namespace nvhcq::tensor {

class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  // One loaded kernel per spec (specs sharing a source share its module).
  // Throws Error naming the kernel and what it computes when compilation fails.
  virtual std::vector<std::shared_ptr<gpu::Kernel>> load_all(
      const std::vector<const LaunchSpec*>& specs) = 0;
  // Sources compiled so far (cache misses of this process).
  virtual size_t compiled() const = 0;
};

std::unique_ptr<KernelLoader> make_nvrtc_loader(gpu::Accelerator& acc);

// Writes `spec`'s source to $NVHCQ_DUMP_KERNELS when it is set.
void dump_kernel_source(const LaunchSpec& spec);

}  // namespace nvhcq::tensor
