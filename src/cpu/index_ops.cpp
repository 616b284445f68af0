#include "cpu/index_ops.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/scalar_ops.h"
#include "cpu/thread_pool.h"

namespace nvhcq::cpu {
namespace {

[[noreturn]] void index_error(int64_t index, int axis, int64_t size) {
  throw Error("index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) + " of size " +
              std::to_string(size));
}

// Decomposes `line` (an index over every axis of `shape` except `axis`) into the
// offsets of the first element of that line for up to three strided views.
struct LineWalker {
  int ndim, axis;
  const int64_t* shape;
  int64_t lines() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d)
      if (d != axis) n *= shape[d];
    return n;
  }
  void coords(int64_t line, int64_t* idx) const {
    for (int d = ndim - 1; d >= 0; --d) {
      if (d == axis) {
        idx[d] = 0;
        continue;
      }
      idx[d] = line % shape[d];
      line /= shape[d];
    }
  }
};

int64_t offset_of(const int64_t* idx, const int64_t* strides, int ndim, int64_t base) {
  for (int d = 0; d < ndim; ++d) base += idx[d] * strides[d];
  return base;
}

template <typename S>
void gather_typed(int ndim, const int64_t* shape, int axis, const StridedOperand& x, int64_t x_axis_size,
                  const StridedOperand& index, void* out) {
  LineWalker walk{ndim, axis, shape};
  const int64_t len = shape[axis];
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1));
  // Output is contiguous over `shape`: its strides.
  int64_t out_strides[kMaxDims];
  int64_t st = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out_strides[d] = st;
    st *= shape[d];
  }
  parallel_for(0, walk.lines(), grain, [&](int64_t l0, int64_t l1) {
    int64_t idx[kMaxDims];
    for (int64_t line = l0; line < l1; ++line) {
      walk.coords(line, idx);
      const int64_t xo = offset_of(idx, x.strides, ndim, x.offset);
      const int64_t io = offset_of(idx, index.strides, ndim, index.offset);
      const int64_t oo = offset_of(idx, out_strides, ndim, 0);
      const S* xp = static_cast<const S*>(x.data);
      S* op = static_cast<S*>(out);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t k = read_as_int64(index.data, index.dtype, io + i * index.strides[axis]);
        if (k < 0 || k >= x_axis_size) index_error(k, axis, x_axis_size);
        op[oo + i * out_strides[axis]] = xp[xo + k * x.strides[axis]];
      }
    }
  });
}

template <typename S>
void scatter_add_typed(int ndim, const int64_t* shape, int axis, const int64_t* out_shape, S* out,
                       const StridedOperand& index, const StridedOperand& src) {
  using C = std::conditional_t<std::is_integral_v<S> || std::is_same_v<S, Bool8>, int64_t,
                               std::conditional_t<std::is_same_v<S, double>, double, float>>;
  LineWalker walk{ndim, axis, shape};
  const int64_t len = shape[axis];
  int64_t out_strides[kMaxDims];
  int64_t st = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out_strides[d] = st;
    st *= out_shape[d];
  }
  for (int d = 0; d < ndim; ++d) {
    if (d != axis && shape[d] > out_shape[d]) {
      throw Error("scatter_add: index extent " + std::to_string(shape[d]) + " exceeds the input's " +
                  std::to_string(out_shape[d]) + " along axis " + std::to_string(d));
    }
  }
  // Lines along `axis` touch disjoint output lines, so they run in parallel.
  parallel_for(0, walk.lines(), std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)), [&](int64_t l0, int64_t l1) {
    int64_t idx[kMaxDims];
    for (int64_t line = l0; line < l1; ++line) {
      walk.coords(line, idx);
      const int64_t io = offset_of(idx, index.strides, ndim, index.offset);
      const int64_t so = offset_of(idx, src.strides, ndim, src.offset);
      const int64_t oo = offset_of(idx, out_strides, ndim, 0);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t k = read_as_int64(index.data, index.dtype, io + i * index.strides[axis]);
        if (k < 0 || k >= out_shape[axis]) index_error(k, axis, out_shape[axis]);
        S& dst = out[oo + k * out_strides[axis]];
        C v;
        if constexpr (std::is_integral_v<C>) v = read_as_int64(src.data, src.dtype, so + i * src.strides[axis]);
        else v = static_cast<C>(read_as_double(src.data, src.dtype, so + i * src.strides[axis]));
        dst = store_as<S>(scalar::add(load_as<C>(dst), v));
      }
    }
  });
}

}  // namespace

void gather(int ndim, const int64_t* shape, int axis, const StridedOperand& x, int64_t x_axis_size,
            const StridedOperand& index, void* out) {
  if (is_float(index.dtype) || index.dtype == DType::kBool) throw Error("gather: index dtype must be an integer type");
  for (int d = 0; d < ndim; ++d)
    if (shape[d] == 0) return;
  NVHCQ_DISPATCH_DTYPE(x.dtype, S, gather_typed<S>(ndim, shape, axis, x, x_axis_size, index, out));
}

void scatter_add(int ndim, const int64_t* shape, int axis, const int64_t* out_shape, void* out, DType out_dtype,
                 const StridedOperand& index, const StridedOperand& src) {
  if (is_float(index.dtype) || index.dtype == DType::kBool) throw Error("scatter_add: index dtype must be an integer type");
  for (int d = 0; d < ndim; ++d)
    if (shape[d] == 0) return;
  NVHCQ_DISPATCH_DTYPE(out_dtype, S, scatter_add_typed<S>(ndim, shape, axis, out_shape, static_cast<S*>(out), index, src));
}

void cumsum(int ndim, const int64_t* shape, int axis, const StridedOperand& x, void* out, DType out_dtype) {
  for (int d = 0; d < ndim; ++d)
    if (shape[d] == 0) return;
  LineWalker walk{ndim, axis, shape};
  const int64_t len = shape[axis];
  int64_t out_strides[kMaxDims];
  int64_t st = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out_strides[d] = st;
    st *= shape[d];
  }
  const bool float_acc = is_float(x.dtype) || is_float(out_dtype);
  parallel_for(0, walk.lines(), std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)), [&](int64_t l0, int64_t l1) {
    int64_t idx[kMaxDims];
    for (int64_t line = l0; line < l1; ++line) {
      walk.coords(line, idx);
      const int64_t xo = offset_of(idx, x.strides, ndim, x.offset);
      const int64_t oo = offset_of(idx, out_strides, ndim, 0);
      if (float_acc) {
        double acc = 0;
        for (int64_t i = 0; i < len; ++i) {
          acc += read_as_double(x.data, x.dtype, xo + i * x.strides[axis]);
          write_from_double(out, out_dtype, oo + i * out_strides[axis], acc);
        }
      } else {
        int64_t acc = 0;
        for (int64_t i = 0; i < len; ++i) {
          acc = scalar::add(acc, read_as_int64(x.data, x.dtype, xo + i * x.strides[axis]));
          write_from_int64(out, out_dtype, oo + i * out_strides[axis], acc);
        }
      }
    }
  });
}

}  // namespace nvhcq::cpu
