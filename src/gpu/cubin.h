#pragma once
// Reads a CUBIN (the ELF NVRTC and nvcc produce for one SM architecture): lays out
// its loadable sections into one image, records the relocations to apply once the
// image's GPU address is known, and extracts each kernel's launch attributes from
// the .nv.info sections. Every offset and size is bounds-checked: a truncated or
// corrupt file is a FormatError, never a crash.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace nvhcq::gpu {

struct CubinRelocation {
  uint64_t image_offset;  // where to patch, in the image
  uint64_t target;        // image offset of the symbol + addend
  uint32_t type;          // R_CUDA_*
};

struct CubinKernel {
  std::string name;
  uint64_t text_offset = 0, text_size = 0;  // code, in the image
  uint32_t registers = 0;
  uint32_t barriers = 0;  // named barriers (EIATTR_NUM_BARRIERS); the QMD must allow at least these
  // Size of .nv.shared.<kernel>: static shared memory, including the 1 KiB the
  // hardware reserves per CTA on sm_80+ (0 when the kernel uses none).
  uint32_t static_shared_bytes = 0;
  uint32_t local_bytes_per_thread = 0;   // stack / frame the kernel needs (without ABI reserve)
  uint32_t param_base = 0;               // first parameter's offset in constant bank 0
  uint32_t param_bytes = 0;              // total parameter bytes
  std::vector<uint32_t> param_offsets;   // per parameter, relative to param_base
  std::vector<uint32_t> param_sizes;
  uint32_t max_threads = 0;              // __launch_bounds__ or 0
  uint32_t required_threads[3] = {0, 0, 0};  // __reqntid__ or 0
  uint32_t cluster_dims[3] = {1, 1, 1};      // __cluster_dims__ (thread-block clusters), or 1s
  // Other constant banks the kernel reads (index -> image offset and size).
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> constant_banks;
};

class Cubin {
 public:
  // Parses the bytes (they are copied). Throws FormatError for anything malformed.
  explicit Cubin(std::span<const uint8_t> bytes);

  const std::vector<uint8_t>& image() const { return image_; }
  const std::vector<CubinRelocation>& relocations() const { return relocations_; }
  const std::map<std::string, CubinKernel>& kernels() const { return kernels_; }
  // Every function symbol: the kernels and the device functions the compiler
  // left as real calls (its own slow paths, or a helper it did not inline).
  const std::vector<std::string>& functions() const { return functions_; }
  const CubinKernel& kernel(const std::string& name) const;  // throws Error if absent
  uint32_t sm_arch() const { return sm_arch_; }               // e.g. 90, from e_flags

  // The image with relocations applied for a load at `gpu_base`.
  std::vector<uint8_t> relocated_image(uint64_t gpu_base) const;

 private:
  std::vector<uint8_t> image_;
  std::vector<CubinRelocation> relocations_;
  std::map<std::string, CubinKernel> kernels_;
  std::vector<std::string> functions_;
  uint32_t sm_arch_ = 0;
};

}  // namespace nvhcq::gpu
