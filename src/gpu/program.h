#pragma once
// A kernel loaded for the direct path: the CUBIN image uploaded and relocated in
// GPU memory, and a QMD template holding everything about the launch that does
// not change between launches.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "gpu/buffer.h"
#include "gpu/code_heap.h"
#include "gpu/cubin.h"
#include "gpu/kernel_args.h"
#include "gpu/qmd.h"

namespace nvhcq::gpu {

class Device;

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
  // The SM carve-out (KiB of the SM's unified L1 and shared memory given to
  // shared memory) the launch asks for at least; 0 leaves it to what the
  // launch's blocks need. A hint: the carve-out decides how much stays L1.
  uint32_t min_carveout_kib = 0;

  // Blocks (CTAs) in the grid.
  uint64_t blocks() const { return uint64_t{grid[0]} * grid[1] * grid[2]; }
};

class Program {
 public:
  Program(Device& device, std::span<const uint8_t> cubin, const std::string& kernel);
  // Compiles CUDA C for the device's architecture (through the cache) and loads it.
  static Program from_source(Device& device, const std::string& source, const std::string& name,
                             const std::string& kernel, compile::CompileOptions options = {});
  // Compiles an embedded kernel file (src/kernels/) and loads `kernel` from it.
  static Program embedded(Device& device, const std::string& file, const std::string& kernel,
                          compile::CompileOptions options = {});

  const CubinKernel& kernel() const { return kernel_; }
  const std::string& name() const { return kernel_.name; }
  uint64_t code_va() const { return image_.va() + kernel_.text_offset; }
  const Qmd& qmd_template() const { return template_; }
  // Parameters start here in constant bank 0; the bank is this long in total.
  uint32_t param_base() const { return param_base_; }
  uint32_t cbuf0_bytes() const;
  uint32_t max_threads_per_block() const { return max_threads_; }
  // Blocks in each dimension of the kernel's thread-block clusters (1s: none).
  const uint32_t* cluster_dims() const { return kernel_.cluster_dims; }

  // Lays the arguments out as the kernel expects; throws Error on a count or size mismatch.
  std::vector<uint8_t> pack(const KernelArgs& args) const;
  // Throws Error for dimensions the kernel or the hardware cannot launch.
  void check_launch(const LaunchDims& dims) const;
  // Shared memory one CTA of this launch gets (reserved + static + dynamic).
  uint32_t shared_bytes(const LaunchDims& dims) const;

 private:
  Device* device_;
  CubinKernel kernel_;
  CodeBlock image_;  // the relocated CUBIN image: code and constant data
  Qmd template_;
  uint32_t param_base_ = 0;
  uint32_t max_threads_ = 1024;
};

}  // namespace nvhcq::gpu
