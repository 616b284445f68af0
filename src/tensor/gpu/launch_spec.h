#pragma once
// LaunchSpec: one kernel launch the GPU backend will issue, before buffers are
// bound: the CUDA C to compile (generated or embedded), the entry point, launch
// dimensions and arguments that name nodes (whose buffers the backend supplies)
// or carry raw values.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/program.h"
#include "tensor/node.h"

namespace nvhcq::tensor {

struct ArgSpec {
  enum class Kind { kBuffer, kScratch, kErrorFlag, kValue };
  Kind kind = Kind::kValue;
  const Node* node = nullptr;  // kBuffer: the node whose buffer (+ byte_offset) is passed
  uint64_t byte_offset = 0;    // kBuffer
  size_t scratch_bytes = 0;    // kScratch: a temporary buffer of this size
  std::vector<uint8_t> bytes;  // kValue: the raw argument (at most 64 bytes)

  static ArgSpec buffer(const Node* n, uint64_t byte_offset = 0) {
    ArgSpec a;
    a.kind = Kind::kBuffer;
    a.node = n;
    a.byte_offset = byte_offset;
    return a;
  }
  static ArgSpec scratch(size_t bytes) {
    ArgSpec a;
    a.kind = Kind::kScratch;
    a.scratch_bytes = bytes;
    return a;
  }
  static ArgSpec error_flag() {
    ArgSpec a;
    a.kind = Kind::kErrorFlag;
    return a;
  }
  template <typename T>
  static ArgSpec value(const T& v) {
    static_assert(sizeof(T) <= 64, "kernel arguments are at most 64 bytes");
    ArgSpec a;
    a.kind = Kind::kValue;
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
  }
};

struct LaunchSpec {
  std::string file;    // name of the translation unit (an embedded file, or a generated name)
  std::string source;  // its CUDA C
  std::string entry;   // the __global__ function
  std::vector<ArgSpec> args;
  gpu::LaunchDims dims;
  std::string what;  // what the kernel computes, for error messages and dumps
};

// Launch-geometry facts the generators need.
struct KernelTarget {
  uint32_t sm_count = 132;
  // f16/bf16 matmuls large enough go to the tensor-core GEMM (src/kernels/gemm_mma.cu)
  // instead of the CUDA-core tensor_matmul.cu (not on the host emulator).
  bool tensor_core_gemm = false;
};

}  // namespace nvhcq::tensor
