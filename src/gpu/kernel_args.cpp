#include "gpu/kernel_args.h"

#include "gpu/buffer.h"

namespace nvhcq::gpu {

KernelArgs& KernelArgs::add(const Buffer& buffer, uint64_t offset) {
  return add(static_cast<uint64_t>(buffer.va() + offset));
}

}  // namespace nvhcq::gpu
