#include "cpu/reduce.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/scalar_ops.h"
#include "cpu/thread_pool.h"

namespace nvhcq::cpu {
namespace {

// The reduced axes, merged where they form one run of memory; the last is innermost.
struct ReducedSpace {
  int n = 0;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
  int64_t size = 1;
};

// Calls f(element_offset_of_segment_start, stride, count) for contiguous runs of the
// flattened reduced index range [r0, r1).
template <typename F>
void for_segments(const ReducedSpace& rs, int64_t base, int64_t r0, int64_t r1, F f) {
  const int inner = rs.n - 1;
  int64_t idx[kMaxDims];
  int64_t rem = r0;
  for (int d = inner; d >= 0; --d) {
    idx[d] = rem % rs.shape[d];
    rem /= rs.shape[d];
  }
  int64_t r = r0;
  while (r < r1) {
    int64_t off = base;
    for (int d = 0; d < rs.n; ++d) off += idx[d] * rs.strides[d];
    int64_t count = std::min(rs.shape[inner] - idx[inner], r1 - r);
    f(off, rs.strides[inner], count, r);
    r += count;
    idx[inner] += count;
    for (int d = inner; d > 0 && idx[d] == rs.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <typename Acc>
struct SumOp {
  static Acc identity() { return Acc(0); }
  static Acc combine(Acc a, Acc b) { return scalar::add(a, b); }
};
template <typename Acc>
struct ProdOp {
  static Acc identity() { return Acc(1); }
  static Acc combine(Acc a, Acc b) { return scalar::mul(a, b); }
};
template <typename Acc>
struct MaxOp {
  static Acc combine(Acc a, Acc b) { return scalar::maximum(a, b); }
};
template <typename Acc>
struct MinOp {
  static Acc combine(Acc a, Acc b) { return scalar::minimum(a, b); }
};

// GCC 12 at -O3 vectorizes the lane loop below wrongly for 1- and 2-byte integer
// inputs (a u8 sum of 24 elements came out as 45, not 102); clang, -O2 and this
// attribute give the right sums. The lanes keep their instruction-level parallelism.
#if defined(__GNUC__) && !defined(__clang__)
#define NVHCQ_NO_LOOP_VECTORIZE __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define NVHCQ_NO_LOOP_VECTORIZE
#endif

// Folds [r0, r1) (non-empty) into one accumulator, starting from `init`.
template <typename S, typename Acc, typename Op>
NVHCQ_NO_LOOP_VECTORIZE Acc fold(const S* p, const ReducedSpace& rs, int64_t base, int64_t r0, int64_t r1, Acc init) {
  Acc acc = init;
  for_segments(rs, base, r0, r1, [&](int64_t off, int64_t stride, int64_t count, int64_t) {
    const S* q = p + off;
    if (stride == 1 && count >= 16) {
      // Independent lanes give the loop instruction-level parallelism.
      Acc lane[8];
      for (int j = 0; j < 8; ++j) lane[j] = load_as<Acc>(q[j]);
      int64_t k = 8;
      for (; k + 8 <= count; k += 8) {
        for (int j = 0; j < 8; ++j) lane[j] = Op::combine(lane[j], load_as<Acc>(q[k + j]));
      }
      for (; k < count; ++k) lane[0] = Op::combine(lane[0], load_as<Acc>(q[k]));
      Acc part = lane[0];
      for (int j = 1; j < 8; ++j) part = Op::combine(part, lane[j]);
      acc = Op::combine(acc, part);
    } else {
      for (int64_t k = 0; k < count; ++k) acc = Op::combine(acc, load_as<Acc>(q[k * stride]));
    }
  });
  return acc;
}

struct ArgResult {
  double value;  // compute value (exact for f16/bf16/f32/f64 and ints below 2^53)
  int64_t index;
  bool nan;
};

template <typename S, bool kMax>
ArgResult arg_fold(const S* p, const ReducedSpace& rs, int64_t base, int64_t r0, int64_t r1) {
  using C = std::conditional_t<std::is_integral_v<S> || std::is_same_v<S, Bool8>, int64_t, double>;
  C best{};
  int64_t best_index = -1;
  bool found_nan = false;
  for_segments(rs, base, r0, r1, [&](int64_t off, int64_t stride, int64_t count, int64_t r) {
    if (found_nan) return;
    for (int64_t k = 0; k < count; ++k) {
      C v = load_as<C>(p[off + k * stride]);
      if constexpr (!std::is_integral_v<C>) {
        if (v != v) {
          best = v;
          best_index = r + k;
          found_nan = true;
          return;
        }
      }
      if (best_index < 0 || (kMax ? v > best : v < best)) {
        best = v;
        best_index = r + k;
      }
    }
  });
  return {static_cast<double>(best), best_index, found_nan};
}

template <bool kMax>
ArgResult arg_combine(const ArgResult& a, const ArgResult& b) {  // a precedes b
  if (a.nan) return a;
  if (b.nan) return b;
  return (kMax ? b.value > a.value : b.value < a.value) ? b : a;
}

constexpr int64_t kSplit = 16384;  // fixed partial-reduction chunk

template <typename S>
void reduce_typed(ReduceOp op, const S* p, const int64_t* out_offsets_dims, int n_kept, const int64_t* kept_shape,
                  const int64_t* kept_strides, int64_t n_out, const ReducedSpace& rs, int64_t in_offset, void* out,
                  DType out_dtype) {
  auto base_of = [&](int64_t o) {
    int64_t off = in_offset;
    for (int d = n_kept - 1; d >= 0; --d) {
      off += (o % kept_shape[d]) * kept_strides[d];
      o /= kept_shape[d];
    }
    return off;
  };
  constexpr bool kFloatIn = !(std::is_integral_v<S> || std::is_same_v<S, Bool8>);
  using SumAcc = std::conditional_t<kFloatIn, double, int64_t>;
  using CmpAcc = std::conditional_t<kFloatIn, double, int64_t>;

  auto write = [&](int64_t o, auto value) {
    if constexpr (std::is_floating_point_v<decltype(value)>) write_from_double(out, out_dtype, o, value);
    else write_from_int64(out, out_dtype, o, value);
  };

  // One output: its reduced range split into fixed chunks, folded in parallel.
  auto one_output = [&](int64_t o, bool split) {
    const int64_t base = base_of(o);
    const int64_t parts = split ? (rs.size + kSplit - 1) / kSplit : 1;
    auto range = [&](int64_t i) { return std::pair<int64_t, int64_t>(i * kSplit, std::min(rs.size, (i + 1) * kSplit)); };
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kProd: {
        bool sum = op == ReduceOp::kSum;
        SumAcc init = sum ? SumOp<SumAcc>::identity() : ProdOp<SumAcc>::identity();
        if (parts == 1) {
          write(o, sum ? fold<S, SumAcc, SumOp<SumAcc>>(p, rs, base, 0, rs.size, init)
                       : fold<S, SumAcc, ProdOp<SumAcc>>(p, rs, base, 0, rs.size, init));
          return;
        }
        std::vector<SumAcc> partial(parts);
        parallel_for(0, parts, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) {
            auto [r0, r1] = range(i);
            partial[i] = sum ? fold<S, SumAcc, SumOp<SumAcc>>(p, rs, base, r0, r1, init)
                             : fold<S, SumAcc, ProdOp<SumAcc>>(p, rs, base, r0, r1, init);
          }
        });
        SumAcc acc = init;
        for (auto v : partial) acc = sum ? SumOp<SumAcc>::combine(acc, v) : ProdOp<SumAcc>::combine(acc, v);
        write(o, acc);
        return;
      }
      case ReduceOp::kMax:
      case ReduceOp::kMin: {
        bool mx = op == ReduceOp::kMax;
        auto part = [&](int64_t r0, int64_t r1) {
          CmpAcc first{};
          for_segments(rs, base, r0, r0 + 1, [&](int64_t off, int64_t, int64_t, int64_t) { first = load_as<CmpAcc>(p[off]); });
          return mx ? fold<S, CmpAcc, MaxOp<CmpAcc>>(p, rs, base, r0, r1, first)
                    : fold<S, CmpAcc, MinOp<CmpAcc>>(p, rs, base, r0, r1, first);
        };
        if (parts == 1) {
          write(o, part(0, rs.size));
          return;
        }
        std::vector<CmpAcc> partial(parts);
        parallel_for(0, parts, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) partial[i] = part(range(i).first, range(i).second);
        });
        CmpAcc acc = partial[0];
        for (auto v : partial) acc = mx ? MaxOp<CmpAcc>::combine(acc, v) : MinOp<CmpAcc>::combine(acc, v);
        write(o, acc);
        return;
      }
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin: {
        bool mx = op == ReduceOp::kArgMax;
        auto part = [&](int64_t r0, int64_t r1) {
          return mx ? arg_fold<S, true>(p, rs, base, r0, r1) : arg_fold<S, false>(p, rs, base, r0, r1);
        };
        ArgResult acc;
        if (parts == 1) {
          acc = part(0, rs.size);
        } else {
          std::vector<ArgResult> partial(parts);
          parallel_for(0, parts, 1, [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1; ++i) partial[i] = part(range(i).first, range(i).second);
          });
          acc = partial[0];
          for (int64_t i = 1; i < parts; ++i) acc = mx ? arg_combine<true>(acc, partial[i]) : arg_combine<false>(acc, partial[i]);
        }
        write(o, acc.index);
        return;
      }
    }
  };

  const int64_t work = n_out * std::max<int64_t>(rs.size, 1);
  const int threads = default_pool().size();
  if (n_out >= 4 * threads || rs.size < 2 * kSplit || work < 65536) {
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(rs.size, 1));
    parallel_for(0, n_out, grain, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) one_output(o, false);
    });
  } else {
    for (int64_t o = 0; o < n_out; ++o) one_output(o, true);
  }
  (void)out_offsets_dims;
}

}  // namespace

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kArgMax: return "argmax";
    case ReduceOp::kArgMin: return "argmin";
  }
  return "?";
}

void reduce(ReduceOp op, int ndim, const int64_t* shape, const bool* reduced_axes, const StridedOperand& in,
            void* out, DType out_dtype) {
  if (ndim > kMaxDims) throw Error("tensor has " + std::to_string(ndim) + " dimensions; at most 16 are supported");
  if (in.masked()) throw Error("internal: reduce input must not be masked");
  int n_kept = 0;
  int64_t kept_shape[kMaxDims], kept_strides[kMaxDims];
  int64_t n_out = 1;
  ReducedSpace rs;
  int n_red_axes = 0;
  for (int d = 0; d < ndim; ++d) {
    if (reduced_axes[d]) {
      ++n_red_axes;
      rs.size *= shape[d];
      if (shape[d] == 1) continue;
      if (rs.n > 0 && rs.strides[rs.n - 1] == in.strides[d] * shape[d]) {  // merge into previous
        rs.shape[rs.n - 1] *= shape[d];
        rs.strides[rs.n - 1] = in.strides[d];
      } else {
        rs.shape[rs.n] = shape[d];
        rs.strides[rs.n] = in.strides[d];
        ++rs.n;
      }
    } else {
      kept_shape[n_kept] = shape[d];
      kept_strides[n_kept] = in.strides[d];
      ++n_kept;
      n_out *= shape[d];
    }
  }
  if (rs.n == 0) {  // only size-1 (or no) reduced axes: one element per output
    rs.n = 1;
    rs.shape[0] = 1;
    rs.strides[0] = 0;
  }
  bool is_arg = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin;
  if (is_arg && n_red_axes != 1) throw Error(std::string(op_name(op)) + " reduces exactly one axis");
  if (is_arg && out_dtype != DType::kI64) throw Error("internal: argmax/argmin output must be i64");
  if (n_out == 0) return;
  if (rs.size == 0) {
    if (op == ReduceOp::kSum || op == ReduceOp::kProd) {
      for (int64_t o = 0; o < n_out; ++o) write_from_int64(out, out_dtype, o, op == ReduceOp::kSum ? 0 : 1);
      return;
    }
    throw Error(std::string(op_name(op)) + " of an empty range has no value: the reduced axes have size 0");
  }
  NVHCQ_DISPATCH_DTYPE(in.dtype, S,
                       reduce_typed<S>(op, static_cast<const S*>(in.data), nullptr, n_kept, kept_shape, kept_strides,
                                       n_out, rs, in.offset, out, out_dtype));
}

}  // namespace nvhcq::cpu
