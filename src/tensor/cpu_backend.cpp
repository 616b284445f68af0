#include "tensor/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/reduce.h"
#include "tensor/cpu_library.h"
#include "tensor/cpu_operand.h"

namespace nvhcq::tensor {
namespace {

class HostBuffer final : public Buffer {
 public:
  HostBuffer(Backend* backend, size_t bytes) : Buffer(backend, bytes) {
    // 64-byte alignment for vector loads; at least one line so empty tensors
    // still have an address.
    size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    data_ = std::aligned_alloc(64, rounded);
    if (data_ == nullptr) {
      throw OutOfMemoryError("cannot allocate " + std::to_string(bytes) + " bytes of host memory for a tensor");
    }
  }
  ~HostBuffer() override { std::free(data_); }
  void* host_ptr() const override { return data_; }

 private:
  void* data_;
};

void check_range(const Buffer& b, size_t offset, size_t bytes, const char* what) {
  if (offset > b.bytes() || bytes > b.bytes() - offset) {
    throw Error(std::string(what) + ": " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " exceed a buffer of " + std::to_string(b.bytes()) + " bytes");
  }
}

}  // namespace

const std::string& CpuBackend::name() const {
  static const std::string n = "cpu";
  return n;
}

namespace {

std::atomic<bool>& poison_flag() {
  static std::atomic<bool> flag{[] {
    const char* env = std::getenv("NVHCQ_POISON_BUFFERS");
    return env != nullptr && std::string(env) == "1";
  }()};
  return flag;
}

}  // namespace

void CpuBackend::set_poison_new_buffers(bool on) { poison_flag().store(on); }

std::shared_ptr<Buffer> CpuBackend::allocate(size_t bytes) {
  auto buf = std::make_shared<HostBuffer>(this, bytes);
  if (poison_flag().load(std::memory_order_relaxed) && bytes > 0) std::memset(buf->host_ptr(), 0x7F, bytes);
  return buf;
}

void CpuBackend::copy_in(Buffer& dst, size_t offset, const void* src, size_t bytes) {
  check_range(dst, offset, bytes, "copy_in");
  if (bytes) std::memcpy(static_cast<char*>(dst.host_ptr()) + offset, src, bytes);
}

void CpuBackend::copy_out(const Buffer& src, size_t offset, void* dst, size_t bytes) {
  check_range(src, offset, bytes, "copy_out");
  if (bytes) std::memcpy(dst, static_cast<const char*>(src.host_ptr()) + offset, bytes);
}

void CpuBackend::execute(const Schedule& schedule) {
  for (const auto& node : schedule.nodes) {
    if (node->realized() || node->op == Op::kView) continue;
    run(*node);
  }
}

void CpuBackend::run(Node& node) {
  const int ndim = static_cast<int>(node.shape.size());
  const int64_t* shape = node.shape.data();
  auto out_buf = allocate(static_cast<size_t>(numel(node.shape)) * dtype_size(node.dtype));
  CpuOperand out(out_buf, node.dtype, node.shape);
  auto in = [&](size_t i) { return CpuOperand(*node.src.at(i)); };

  switch (node.op) {
    case Op::kBuffer:
    case Op::kView:
      return;
    case Op::kConst:
      if (node.value.is_float()) cpu::write_from_double(out_buf->host_ptr(), node.dtype, 0, node.value.to_double());
      else cpu::write_from_int64(out_buf->host_ptr(), node.dtype, 0, node.value.to_int());
      break;
    case Op::kContiguous:
    case Op::kCast:
      cpu::cast_copy(ndim, shape, out.get(), in(0).get());
      break;
    case Op::kUnary:
      cpu::unary(node.unary_op, ndim, shape, out.get(), in(0).get());
      break;
    case Op::kBinary:
      cpu::binary(node.binary_op, ndim, shape, out.get(), in(0).get(), in(1).get());
      break;
    case Op::kWhere:
      cpu::where(ndim, shape, out.get(), in(0).get(), in(1).get(), in(2).get());
      break;
    case Op::kCat: {
      const Strides st = contiguous_strides(node.shape);
      int64_t at = 0;
      for (size_t i = 0; i < node.src.size(); ++i) {
        CpuOperand piece = in(i);
        const Shape& ps = piece.shape();
        if (numel(ps) > 0) {
          cpu::StridedOperand dst = out.get();
          dst.strides = st.data();
          dst.offset = at * st[node.axis];
          cpu::cast_copy(ndim, ps.data(), dst, piece.get());
        }
        at += ps[node.axis];
      }
      break;
    }
    case Op::kReduce: {
      CpuOperand src = in(0);
      if (src.masked()) src = CpuOperand(dense_copy(src, src.dtype()), src.dtype(), src.shape());
      std::unique_ptr<bool[]> reduced(new bool[src.shape().size() + 1]());
      for (int a : node.axes) reduced[a] = true;
      cpu::reduce(node.reduce_op, static_cast<int>(src.shape().size()), src.shape().data(), reduced.get(),
                  src.get(), out_buf->host_ptr(), node.dtype);
      break;
    }
    default:
      run_library_node(node, *out_buf);
      break;
  }
  node.set_realized(std::move(out_buf));
}

}  // namespace nvhcq::tensor
