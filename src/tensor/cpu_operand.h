#pragma once
// How the CPU backend hands a node's input to a kernel: the base buffer plus the
// View it is read through, as a cpu::StridedOperand; and dense copies in a
// compute type for the library kernels that want contiguous arrays.

#include <memory>
#include <vector>

#include "cpu/strided.h"
#include "tensor/buffer.h"
#include "tensor/node.h"

namespace nvhcq::tensor {

class CpuOperand {
 public:
  // `src` is realized, or a View of a realized node.
  explicit CpuOperand(const Node& src);
  // A dense row-major operand over `buffer`.
  CpuOperand(std::shared_ptr<Buffer> buffer, DType dtype, const Shape& shape);

  const Shape& shape() const { return view_.shape; }
  DType dtype() const { return dtype_; }
  const View& view() const { return view_; }
  bool masked() const { return view_.masked(); }
  cpu::StridedOperand get() const;

 private:
  std::shared_ptr<Buffer> buffer_;
  DType dtype_;
  View view_;
  std::vector<int64_t> lo_, hi_;
};

// A dense copy of `op` converted to `dtype` in a fresh host buffer.
std::shared_ptr<Buffer> dense_copy(const CpuOperand& op, DType dtype);
// The same as a typed vector (T is float, double or int64_t).
template <typename T>
std::vector<T> dense_vector(const CpuOperand& op);
// Copies a dense T array of `shape` into a fresh buffer of `dtype`.
template <typename T>
std::shared_ptr<Buffer> buffer_from(const std::vector<T>& values, const Shape& shape, DType dtype);

}  // namespace nvhcq::tensor
