#pragma once
// The simulated SMs: the test kernels of src/kernels/selftest.cu as CPU
// functions. A launch is matched to its kernel by the machine code at the QMD's
// program address, compared with each kernel's code in the real CUBIN (built by
// NVRTC for the simulated architecture), so a wrong program address, a stale
// upload or a truncated image is caught as it would be on the GPU (by running
// garbage), only louder.

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cubin.h"
#include "sim/sim_memory.h"

namespace nvhcq::sim {

// Thrown by a kernel body for a launch the hardware would fault (an SM exception).
struct KernelException {
  std::string what;
};

// Global memory as a kernel sees it: GPU virtual addresses, where the shader
// shared- and local-memory windows are not global memory at all. Unmapped
// addresses throw SimFault (an MMU fault); window addresses KernelException.
class GlobalMemory {
 public:
  GlobalMemory(const AddressSpace& as, uint64_t shared_window, uint64_t local_window,
               uint64_t window_bytes)
      : as_(as), shared_(shared_window), local_(local_window), window_bytes_(window_bytes) {}
  void read(uint64_t va, void* dst, uint64_t n) const;
  void write(uint64_t va, const void* src, uint64_t n) const;
  template <typename T>
  std::vector<T> read_array(uint64_t va, uint64_t count) const {
    std::vector<T> v(count);
    read(va, v.data(), count * sizeof(T));
    return v;
  }
  template <typename T>
  void write_array(uint64_t va, const std::vector<T>& v) const {
    write(va, v.data(), v.size() * sizeof(T));
  }

 private:
  void check(uint64_t va, uint64_t n, bool write) const;
  const AddressSpace& as_;
  uint64_t shared_, local_, window_bytes_;
};

// One launch, as the kernel body sees it.
struct KernelCall {
  uint32_t grid[3] = {1, 1, 1};  // in blocks, also for a cluster launch
  uint32_t block[3] = {1, 1, 1};
  uint32_t cluster[3] = {1, 1, 1};  // blocks of a thread-block cluster (GRID_GPC_CGA)
  std::vector<uint8_t> params;  // the parameter block from constant bank 0
  std::vector<uint32_t> param_offsets;
  uint32_t dynamic_shared_bytes = 0;  // shared memory left after static and reserved bytes
  const GlobalMemory* memory = nullptr;

  template <typename T>
  T param(size_t index) const;
  uint64_t threads_x() const { return uint64_t{grid[0]} * block[0]; }
};

using KernelBody = std::function<void(const KernelCall&)>;

struct KernelDef {
  std::string name;
  gpu::CubinKernel info;
  std::vector<uint8_t> code;  // .text, as in the CUBIN
  KernelBody body;
};

class KernelCatalog {
 public:
  // The catalog for an SM version (0x807, 0x900, ...), built once: compiles
  // selftest.cu with NVRTC. Throws nvhcq::Error when NVRTC is unavailable.
  static const KernelCatalog& for_sm(uint32_t sm_version);
  // The kernel whose code is at `pc`, or nullptr when the bytes match none.
  const KernelDef* identify(const AddressSpace& as, uint64_t pc) const;
  const KernelDef* find(const std::string& name) const;
  const std::vector<KernelDef>& kernels() const { return kernels_; }

 private:
  explicit KernelCatalog(uint32_t sm_version);
  std::vector<KernelDef> kernels_;
};

template <typename T>
T KernelCall::param(size_t index) const {
  T v{};
  if (index < param_offsets.size() && param_offsets[index] + sizeof(T) <= params.size()) {
    std::memcpy(&v, params.data() + param_offsets[index], sizeof(T));
  }
  return v;
}

}  // namespace nvhcq::sim
