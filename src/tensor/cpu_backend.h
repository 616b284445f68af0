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

 private:
  void run(Node& node);
};

}  // namespace nvhcq::tensor
