#include "cpu/elementwise.h"

#include <cmath>
#include <string>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/scalar_ops.h"
#include "cpu/strided_loop.h"

namespace nvhcq::cpu {
namespace {

// ---- loading and storing tiles -------------------------------------------------

template <typename C, typename S>
void load_range(const TileOperand& t, int64_t b, int64_t e, C* buf) {
  if (b >= e) return;  // a fully padded row: its offset may lie outside the buffer
  const S* p = reinterpret_cast<const S*>(t.base) + t.offset;
  if (t.stride == 1) {
    for (int64_t i = b; i < e; ++i) buf[i] = load_as<C>(p[i]);
  } else if (t.stride == 0) {
    C v = load_as<C>(p[0]);
    for (int64_t i = b; i < e; ++i) buf[i] = v;
  } else {
    for (int64_t i = b; i < e; ++i) buf[i] = load_as<C>(p[i * t.stride]);
  }
}

template <typename C>
void load_tile(const TileOperand& t, DType dtype, int64_t count, C pad, C* buf) {
  for (int64_t i = 0; i < t.valid_begin; ++i) buf[i] = pad;
  NVHCQ_DISPATCH_DTYPE(dtype, S, load_range<C, S>(t, t.valid_begin, t.valid_end, buf));
  for (int64_t i = t.valid_end; i < count; ++i) buf[i] = pad;
}

// Truthiness of any dtype: 1 when the value is nonzero (NaN counts as nonzero).
template <typename S>
void load_truth_range(const TileOperand& t, int64_t b, int64_t e, uint8_t* buf) {
  const S* p = reinterpret_cast<const S*>(t.base) + t.offset;
  for (int64_t i = b; i < e; ++i) {
    const S& v = p[i * t.stride];
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16> || std::is_floating_point_v<S>) {
      buf[i] = load_as<double>(v) != 0.0;
    } else {
      buf[i] = load_as<int64_t>(v) != 0;
    }
  }
}

template <typename C, typename S>
void store_range(const TileOperand& t, int64_t count, const C* buf) {
  S* p = reinterpret_cast<S*>(t.base) + t.offset;
  if (t.stride == 1) {
    for (int64_t i = 0; i < count; ++i) p[i] = store_as<S>(buf[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) p[i * t.stride] = store_as<S>(buf[i]);
  }
}

template <typename C>
void store_tile(const TileOperand& t, DType dtype, int64_t count, const C* buf) {
  NVHCQ_DISPATCH_DTYPE(dtype, S, store_range<C, S>(t, count, buf));
}

template <typename C>
C pad_of(const StridedOperand& op) {
  if constexpr (std::is_integral_v<C>) return op.pad_int;
  else return static_cast<C>(op.pad_float);
}

// ---- the ops on compute buffers ------------------------------------------------

template <typename C, typename F>
inline void map1(const C* a, C* o, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}
template <typename C, typename F>
inline void map2(const C* a, const C* b, C* o, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

[[noreturn]] void unsupported(const char* op, DType dtype) {
  throw Error(std::string("op ") + op + " is not supported for dtype " + dtype_name(dtype));
}

template <typename C>
void apply_unary(UnaryOp op, DType dtype, const C* a, C* o, int64_t n) {
  namespace s = scalar;
  constexpr bool is_int = std::is_integral_v<C>;
  switch (op) {
    case UnaryOp::kNeg: map1(a, o, n, [](C x) { return s::neg(x); }); return;
    case UnaryOp::kAbs: map1(a, o, n, [](C x) { return s::abs(x); }); return;
    case UnaryOp::kSign: map1(a, o, n, [](C x) { return s::sign(x); }); return;
    case UnaryOp::kLogicalNot: map1(a, o, n, [](C x) { return static_cast<C>(x == 0); }); return;
    case UnaryOp::kFloor: if constexpr (is_int) break; else { map1(a, o, n, [](C x) { return std::floor(x); }); return; }
    case UnaryOp::kCeil: if constexpr (is_int) break; else { map1(a, o, n, [](C x) { return std::ceil(x); }); return; }
    case UnaryOp::kRound: if constexpr (is_int) break; else { map1(a, o, n, [](C x) { return s::round_half_even(x); }); return; }
    case UnaryOp::kTrunc: if constexpr (is_int) break; else { map1(a, o, n, [](C x) { return std::trunc(x); }); return; }
    case UnaryOp::kIsNan:
      if constexpr (is_int) map1(a, o, n, [](C) { return C(0); });
      else map1(a, o, n, [](C x) { return static_cast<C>(std::isnan(x)); });
      return;
    case UnaryOp::kIsInf:
      if constexpr (is_int) map1(a, o, n, [](C) { return C(0); });
      else map1(a, o, n, [](C x) { return static_cast<C>(std::isinf(x)); });
      return;
    case UnaryOp::kBitwiseNot:
      if constexpr (is_int) {
        if (dtype == DType::kBool) map1(a, o, n, [](C x) { return static_cast<C>(x == 0); });
        else map1(a, o, n, [](C x) { return ~x; });
        return;
      }
      break;
    default: break;
  }
  if constexpr (!is_int) {
    switch (op) {
      case UnaryOp::kExp: map1(a, o, n, [](C x) { return std::exp(x); }); return;
      case UnaryOp::kExp2: map1(a, o, n, [](C x) { return std::exp2(x); }); return;
      case UnaryOp::kLog: map1(a, o, n, [](C x) { return std::log(x); }); return;
      case UnaryOp::kLog2: map1(a, o, n, [](C x) { return std::log2(x); }); return;
      case UnaryOp::kSqrt: map1(a, o, n, [](C x) { return std::sqrt(x); }); return;
      case UnaryOp::kRsqrt: map1(a, o, n, [](C x) { return s::rsqrt(x); }); return;
      case UnaryOp::kReciprocal: map1(a, o, n, [](C x) { return C(1) / x; }); return;
      case UnaryOp::kSin: map1(a, o, n, [](C x) { return std::sin(x); }); return;
      case UnaryOp::kCos: map1(a, o, n, [](C x) { return std::cos(x); }); return;
      case UnaryOp::kTan: map1(a, o, n, [](C x) { return std::tan(x); }); return;
      case UnaryOp::kTanh: map1(a, o, n, [](C x) { return std::tanh(x); }); return;
      case UnaryOp::kSigmoid: map1(a, o, n, [](C x) { return s::sigmoid(x); }); return;
      case UnaryOp::kErf: map1(a, o, n, [](C x) { return std::erf(x); }); return;
      case UnaryOp::kLog1p: map1(a, o, n, [](C x) { return std::log1p(x); }); return;
      case UnaryOp::kExpm1: map1(a, o, n, [](C x) { return std::expm1(x); }); return;
      default: break;
    }
  } else if (op == UnaryOp::kFloor || op == UnaryOp::kCeil || op == UnaryOp::kRound || op == UnaryOp::kTrunc) {
    map1(a, o, n, [](C x) { return x; });
    return;
  }
  unsupported(op_name(op), dtype);
}

template <typename C>
void apply_binary(BinaryOp op, DType dtype, const C* a, const C* b, C* o, int64_t n) {
  namespace s = scalar;
  switch (op) {
    case BinaryOp::kAdd: map2(a, b, o, n, [](C x, C y) { return s::add(x, y); }); return;
    case BinaryOp::kSub: map2(a, b, o, n, [](C x, C y) { return s::sub(x, y); }); return;
    case BinaryOp::kMul: map2(a, b, o, n, [](C x, C y) { return s::mul(x, y); }); return;
    case BinaryOp::kMax: map2(a, b, o, n, [](C x, C y) { return s::maximum(x, y); }); return;
    case BinaryOp::kMin: map2(a, b, o, n, [](C x, C y) { return s::minimum(x, y); }); return;
    case BinaryOp::kMod: map2(a, b, o, n, [](C x, C y) { return s::mod(x, y); }); return;
    case BinaryOp::kPow: map2(a, b, o, n, [](C x, C y) { return s::pow(x, y); }); return;
    case BinaryOp::kLt: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x < y); }); return;
    case BinaryOp::kLe: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x <= y); }); return;
    case BinaryOp::kEq: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x == y); }); return;
    case BinaryOp::kNe: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x != y); }); return;
    case BinaryOp::kGt: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x > y); }); return;
    case BinaryOp::kGe: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x >= y); }); return;
    case BinaryOp::kLogicalAnd: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x != 0 && y != 0); }); return;
    case BinaryOp::kLogicalOr: map2(a, b, o, n, [](C x, C y) { return static_cast<C>(x != 0 || y != 0); }); return;
    case BinaryOp::kLogicalXor: map2(a, b, o, n, [](C x, C y) { return static_cast<C>((x != 0) != (y != 0)); }); return;
    default: break;
  }
  if constexpr (std::is_integral_v<C>) {
    switch (op) {
      case BinaryOp::kBitAnd: map2(a, b, o, n, [](C x, C y) { return x & y; }); return;
      case BinaryOp::kBitOr: map2(a, b, o, n, [](C x, C y) { return x | y; }); return;
      case BinaryOp::kBitXor: map2(a, b, o, n, [](C x, C y) { return x ^ y; }); return;
      case BinaryOp::kShl: map2(a, b, o, n, [](C x, C y) { return s::shl(x, y); }); return;
      case BinaryOp::kShr: map2(a, b, o, n, [](C x, C y) { return s::shr(x, y); }); return;
      default: break;
    }
  } else {
    if (op == BinaryOp::kDiv) {
      map2(a, b, o, n, [](C x, C y) { return x / y; });
      return;
    }
  }
  unsupported(op_name(op), dtype);
}

void check_operands(const char* what, DType expected_out, const StridedOperand& out) {
  if (out.masked()) throw Error(std::string("internal: ") + what + " output must not be masked");
  if (out.dtype != expected_out) {
    throw Error(std::string("internal: ") + what + " output dtype " + dtype_name(out.dtype) + ", expected " +
                dtype_name(expected_out));
  }
}

template <size_t kBytes>
void raw_copy(int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a) {
  struct Elem {
    unsigned char b[kBytes];
  };
  StridedOperand ops[2] = {out, a};
  for_each_tile(ndim, shape, 2, ops, [&](const Tile& t) {
    const auto& to = t.op[0];
    const auto& ta = t.op[1];
    Elem* o = reinterpret_cast<Elem*>(to.base) + to.offset;
    const Elem* p = reinterpret_cast<const Elem*>(ta.base) + ta.offset;
    if (ta.valid_begin == 0 && ta.valid_end == t.count) {
      if (to.stride == 1 && ta.stride == 1) {
        for (int64_t i = 0; i < t.count; ++i) o[i] = p[i];
      } else {
        for (int64_t i = 0; i < t.count; ++i) o[i * to.stride] = p[i * ta.stride];
      }
      return;
    }
    // Partly padded: the pad value converted once into the element type.
    Elem pad;
    if (is_float(a.dtype)) write_from_double(&pad, a.dtype, 0, a.pad_float);
    else write_from_int64(&pad, a.dtype, 0, a.pad_int);
    for (int64_t i = 0; i < t.count; ++i) {
      bool valid = i >= ta.valid_begin && i < ta.valid_end;
      o[i * to.stride] = valid ? p[i * ta.stride] : pad;
    }
  });
}

}  // namespace

void unary(UnaryOp op, int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a) {
  const DType t = a.dtype;
  check_operands(op_name(op), returns_bool(op) ? DType::kBool : t, out);
  if ((float_only(op) && !is_float(t)) || (integer_only(op) && is_float(t))) unsupported(op_name(op), t);
  StridedOperand ops[2] = {out, a};
  NVHCQ_DISPATCH_COMPUTE(compute_type(t), C, {
    const C pad = pad_of<C>(a);
    for_each_tile(ndim, shape, 2, ops, [&](const Tile& tile) {
      C in[kTile], res[kTile];
      load_tile(tile.op[1], t, tile.count, pad, in);
      apply_unary<C>(op, t, in, res, tile.count);
      store_tile(tile.op[0], out.dtype, tile.count, res);
    });
  });
}

void binary(BinaryOp op, int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a,
            const StridedOperand& b) {
  const DType t = a.dtype;
  if (b.dtype != t) {
    throw Error(std::string("internal: ") + op_name(op) + " operands have dtypes " + dtype_name(t) + " and " +
                dtype_name(b.dtype));
  }
  check_operands(op_name(op), returns_bool(op) ? DType::kBool : t, out);
  if ((float_only(op) && !is_float(t)) || (integer_only(op) && is_float(t))) unsupported(op_name(op), t);
  StridedOperand ops[3] = {out, a, b};
  NVHCQ_DISPATCH_COMPUTE(compute_type(t), C, {
    const C pad_a = pad_of<C>(a), pad_b = pad_of<C>(b);
    for_each_tile(ndim, shape, 3, ops, [&](const Tile& tile) {
      C x[kTile], y[kTile], res[kTile];
      load_tile(tile.op[1], t, tile.count, pad_a, x);
      load_tile(tile.op[2], t, tile.count, pad_b, y);
      apply_binary<C>(op, t, x, y, res, tile.count);
      store_tile(tile.op[0], out.dtype, tile.count, res);
    });
  });
}

void where(int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& cond,
           const StridedOperand& a, const StridedOperand& b) {
  const DType t = a.dtype;
  if (b.dtype != t) throw Error("internal: where operands have different dtypes");
  check_operands("where", t, out);
  StridedOperand ops[4] = {out, cond, a, b};
  NVHCQ_DISPATCH_COMPUTE(compute_type(t), C, {
    const C pad_a = pad_of<C>(a), pad_b = pad_of<C>(b);
    const bool pad_cond = is_float(cond.dtype) ? cond.pad_float != 0.0 : cond.pad_int != 0;
    for_each_tile(ndim, shape, 4, ops, [&](const Tile& tile) {
      uint8_t c[kTile];
      C x[kTile], y[kTile];
      const auto& tc = tile.op[1];
      for (int64_t i = 0; i < tc.valid_begin; ++i) c[i] = pad_cond;
      NVHCQ_DISPATCH_DTYPE(cond.dtype, S, load_truth_range<S>(tc, tc.valid_begin, tc.valid_end, c));
      for (int64_t i = tc.valid_end; i < tile.count; ++i) c[i] = pad_cond;
      load_tile(tile.op[2], t, tile.count, pad_a, x);
      load_tile(tile.op[3], t, tile.count, pad_b, y);
      for (int64_t i = 0; i < tile.count; ++i) x[i] = c[i] ? x[i] : y[i];
      store_tile(tile.op[0], t, tile.count, x);
    });
  });
}

void cast_copy(int ndim, const int64_t* shape, const StridedOperand& out, const StridedOperand& a) {
  if (out.masked()) throw Error("internal: cast output must not be masked");
  if (out.dtype == a.dtype) {
    switch (dtype_size(a.dtype)) {
      case 1: raw_copy<1>(ndim, shape, out, a); return;
      case 2: raw_copy<2>(ndim, shape, out, a); return;
      case 4: raw_copy<4>(ndim, shape, out, a); return;
      default: raw_copy<8>(ndim, shape, out, a); return;
    }
  }
  StridedOperand ops[2] = {out, a};
  NVHCQ_DISPATCH_COMPUTE(compute_type(a.dtype), C, {
    const C pad = pad_of<C>(a);
    for_each_tile(ndim, shape, 2, ops, [&](const Tile& tile) {
      C buf[kTile];
      load_tile(tile.op[1], a.dtype, tile.count, pad, buf);
      store_tile(tile.op[0], out.dtype, tile.count, buf);
    });
  });
}

}  // namespace nvhcq::cpu
