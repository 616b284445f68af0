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

// What the NVRTC loader keeps in memory; above a bound the least recently used
// quarter goes. The on-disk cache keeps every CUBIN, so an evicted kernel comes
// back at the cost of a load. Without a bound, a program that meets a new shape
// every step (each shape is a kernel) would hold every kernel it ever ran, in
// host memory and in GPU code memory.
struct LoaderLimits {
  size_t loaded_kernels = 512;
  size_t cubins = 1024;
};

std::unique_ptr<KernelLoader> make_nvrtc_loader(gpu::Accelerator& acc, LoaderLimits limits = {});

// Writes `spec`'s source to $NVHCQ_DUMP_KERNELS when it is set.
void dump_kernel_source(const LaunchSpec& spec);

}  // namespace nvhcq::tensor
