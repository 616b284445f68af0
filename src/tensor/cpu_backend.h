#pragma once
// The CPU backend: buffers in host memory; every non-View node of a schedule is
// computed into its own buffer by the kernels of src/cpu/ (multi-threaded on the
// default thread pool). It is the reference the GPU backends are tested against.

#include <string>

#include "tensor/backend.h"

namespace nvhcq::tensor {

class CpuBackend final : public Backend {
 public:
  const std::string& name() const override;
  bool supports(DType) const override { return true; }
  std::shared_ptr<Buffer> allocate(size_t bytes) override;
  void copy_in(Buffer& dst, size_t offset, const void* src, size_t bytes) override;
  void copy_out(const Buffer& src, size_t offset, void* dst, size_t bytes) override;
  void execute(const Schedule& schedule) override;

  // When on, new buffers are filled with 0x7F bytes (NaN for f16, huge values for
  // f32/bf16/f64, 127 for i8) so a kernel that leaves an element unwritten is
  // caught by the tests. Also enabled by NVHCQ_POISON_BUFFERS=1.
  static void set_poison_new_buffers(bool on);

 private:
  void run(Node& node);
};

}  // namespace nvhcq::tensor
