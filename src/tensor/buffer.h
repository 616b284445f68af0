#pragma once
// Buffer: device storage owned by a Backend. A realized Node holds one; Views
// read it through strides. CPU buffers are host memory (host_ptr() != null);
// device buffers are read and written through their backend's copy_in/copy_out.

#include <cstddef>

namespace nvhcq::tensor {

class Backend;

class Buffer {
 public:
  Buffer(Backend* backend, size_t bytes) : backend_(backend), bytes_(bytes) {}
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Backend& backend() const { return *backend_; }
  size_t bytes() const { return bytes_; }
  // Host address of the storage when the CPU can address it directly, else null.
  virtual void* host_ptr() const { return nullptr; }

 private:
  Backend* backend_;
  size_t bytes_;
};

}  // namespace nvhcq::tensor
