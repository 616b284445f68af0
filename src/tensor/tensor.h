#pragma once
// Tensor: a lazily evaluated n-dimensional array (docs/tensor.md).
//
//   using nvhcq::tensor::Tensor;
//   Tensor x = Tensor::randn({4, 8}, /*seed=*/1);
//   Tensor w = Tensor::rand({8, 3}, /*seed=*/2);
//   Tensor y = (x.matmul(w) + 1.0).relu().softmax(-1);   // builds a graph
//   std::vector<float> v = y.to_vector<float>();          // runs it
//
// A Tensor is a cheap handle (copies share the node); operations never modify
// their inputs. Shapes, dtypes and devices are checked when an op is built: bad
// input throws nvhcq::Error naming the op and the offending shapes, axis or
// dtype. Data-dependent errors (an index out of range) surface when the graph
// runs. Building graphs is not thread-safe; use one thread per graph.

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/error.h"
#include "tensor/dtype.h"
#include "tensor/node.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"

namespace nvhcq::tensor {

// C++ element type -> dtype, for from_vector / to_vector.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kU8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kI8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kI16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kI64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kF64; };

enum class PadMode { kConstant, kReflect };

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false; used for "no tensor" arguments
  explicit Tensor(NodePtr node) : node_(std::move(node)) {}

  // ---- creation ------------------------------------------------------------
  // Copies numel(shape) elements of `dtype` from host memory.
  static Tensor from_data(const void* data, DType dtype, const Shape& shape, const std::string& device = "cpu");
  // Converts each value to `dtype` (element.h's cast rules) on the host.
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape, DType dtype = DTypeOf<T>::value,
                            const std::string& device = "cpu");
  static Tensor scalar(const Scalar& value, std::optional<DType> dtype = std::nullopt, const std::string& device = "cpu");
  static Tensor full(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
                     const std::string& device = "cpu");
  static Tensor zeros(const Shape& shape, DType dtype = kDefaultFloat, const std::string& device = "cpu");
  static Tensor ones(const Shape& shape, DType dtype = kDefaultFloat, const std::string& device = "cpu");
  Tensor zeros_like() const;
  Tensor ones_like() const;
  Tensor full_like(const Scalar& value) const;
  // [start, stop) by step; i64 when all three are integers, else f32 unless given.
  static Tensor arange(const Scalar& start, const Scalar& stop, const Scalar& step = 1,
                       std::optional<DType> dtype = std::nullopt, const std::string& device = "cpu");
  static Tensor arange(int64_t stop, DType dtype = kDefaultInt, const std::string& device = "cpu");
  static Tensor linspace(double start, double end, int64_t steps, DType dtype = kDefaultFloat,
                         const std::string& device = "cpu");
  static Tensor eye(int64_t n, int64_t m = -1, DType dtype = kDefaultFloat, const std::string& device = "cpu");
  // Philox4x32-10 draws (cpu/philox.h): identical on every backend for one seed.
  static Tensor rand(const Shape& shape, uint64_t seed, DType dtype = kDefaultFloat, const std::string& device = "cpu");
  static Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kDefaultFloat, const std::string& device = "cpu");
  static Tensor randint(int64_t low, int64_t high, const Shape& shape, uint64_t seed, DType dtype = kDefaultInt,
                        const std::string& device = "cpu");

  // ---- properties ----------------------------------------------------------
  bool defined() const { return node_ != nullptr; }
  const NodePtr& node() const { return node_; }
  const Shape& shape() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t size(int axis) const;
  int64_t numel() const { return tensor::numel(shape()); }
  DType dtype() const;
  const std::string& device() const;
  // Element strides of the view this tensor reads (row-major for computed tensors).
  Strides strides() const;
  bool is_contiguous() const;
  bool is_realized() const;

  // ---- execution and data --------------------------------------------------
  // Runs the pending graph behind this tensor. Returns *this.
  const Tensor& realize() const;
  // Realizes several tensors with one schedule per device.
  static void realize_all(const std::vector<Tensor>& tensors);
  // Realizes and reads every element in row-major order, converted to T.
  template <typename T>
  std::vector<T> to_vector() const;
  // The only element of a one-element tensor.
  template <typename T>
  T item() const;
  // Realizes and returns the elements as dense bytes of dtype().
  std::vector<uint8_t> to_bytes() const;
  Tensor to(const std::string& device) const;
  Tensor cast(DType dtype) const;
  // A dense row-major copy unless the tensor already is one.
  Tensor contiguous() const;
  Tensor clone() const;  // always a new buffer
  std::string to_string() const;  // shape, dtype, device and (small tensors) values

  // ---- elementwise: unary --------------------------------------------------
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor erf() const;
  Tensor relu() const;
  Tensor leaky_relu(double negative_slope = 0.01) const;
  Tensor gelu(bool tanh_approximation = false) const;
  Tensor silu() const;
  Tensor softplus(double beta = 1.0, double threshold = 20.0) const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;  // half to even
  Tensor trunc() const;
  Tensor sign() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor logical_not() const;
  Tensor bitwise_not() const;
  Tensor isnan() const;
  Tensor isinf() const;

  // ---- elementwise: binary (broadcasting, promote_types) ------------------
  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;  // true division: integers give f32
  Tensor pow(const Tensor& o) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor mod(const Tensor& o) const;  // sign of the divisor
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor shl(const Tensor& o) const;
  Tensor shr(const Tensor& o) const;
  // The same with a weak scalar on the right (dtype.h).
  Tensor add(const Scalar& s) const;
  Tensor sub(const Scalar& s) const;
  Tensor mul(const Scalar& s) const;
  Tensor div(const Scalar& s) const;
  Tensor pow(const Scalar& s) const;
  Tensor maximum(const Scalar& s) const;
  Tensor minimum(const Scalar& s) const;
  Tensor mod(const Scalar& s) const;
  Tensor lt(const Scalar& s) const;
  Tensor le(const Scalar& s) const;
  Tensor eq(const Scalar& s) const;
  Tensor ne(const Scalar& s) const;
  Tensor gt(const Scalar& s) const;
  Tensor ge(const Scalar& s) const;
  Tensor bitwise_and(const Scalar& s) const;
  Tensor bitwise_or(const Scalar& s) const;
  Tensor bitwise_xor(const Scalar& s) const;
  Tensor shl(const Scalar& s) const;
  Tensor shr(const Scalar& s) const;
  // cond ? a : b, broadcasting all three.
  static Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
  static Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
  static Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);

  // ---- reductions (axes: empty = all; negative counts from the end) -------
  Tensor sum(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor prod(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor max(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor min(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor any(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor all(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor var(const std::vector<int>& axes = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(const std::vector<int>& axes = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor logsumexp(const std::vector<int>& axes = {}, bool keepdim = false) const;
  // Index of the first extreme along `axis` (flattened when absent); i64.
  Tensor argmax(std::optional<int> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int> axis = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int axis = -1) const;
  Tensor log_softmax(int axis = -1) const;
  Tensor cumsum(int axis) const;

  // ---- movement (views where possible) -------------------------------------
  Tensor reshape(const Shape& shape) const;  // one extent may be -1
  Tensor flatten(int start_axis = 0, int end_axis = -1) const;
  Tensor permute(const std::vector<int>& order) const;
  Tensor transpose(int a, int b) const;
  Tensor t() const;  // transpose of the last two axes
  Tensor expand(const Shape& shape) const;  // -1 keeps an extent
  Tensor broadcast_to(const Shape& shape) const;
  // Python slicing of one axis: start/stop default to the ends; step may be negative.
  Tensor slice(int axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) const;
  // Selects index `i` of `axis` (negative from the end), dropping the axis.
  Tensor select(int axis, int64_t index) const;
  // pads[i] = {before, after} for axis i (fewer entries pad the first axes only;
  // negative amounts crop). Reflect needs amounts smaller than the extent.
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& pads, PadMode mode = PadMode::kConstant,
             const Scalar& value = 0) const;
  Tensor flip(const std::vector<int>& axes) const;
  Tensor squeeze(std::optional<int> axis = std::nullopt) const;
  Tensor unsqueeze(int axis) const;
  Tensor repeat(const std::vector<int64_t>& repeats) const;
  static Tensor cat(const std::vector<Tensor>& tensors, int axis = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int axis = 0);
  std::vector<Tensor> split(int64_t size, int axis = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int axis = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int axis = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;

  // ---- indexing ------------------------------------------------------------
  Tensor gather(int axis, const Tensor& index) const;
  Tensor scatter_add(int axis, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int axis, const Tensor& index) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;

  // ---- linear algebra ------------------------------------------------------
  Tensor matmul(const Tensor& o) const;
  Tensor dot(const Tensor& o) const;

 private:
  NodePtr node_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);

// ---- template definitions ----------------------------------------------------

namespace detail {
// Reads a tensor's elements (realizing it), row-major, converted to `dtype`, into `out`.
void read_elements(const Tensor& t, DType dtype, void* out);
// Throws unless `count` values fill `shape`.
void check_count(size_t count, const Shape& shape);
}  // namespace detail

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape, DType dtype, const std::string& device) {
  detail::check_count(values.size(), shape);
  // Converted on the host, so a device never needs T's dtype (f64 on a GPU).
  Tensor host;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    host = from_data(bytes.data(), DType::kBool, shape, "cpu");
  } else {
    host = from_data(values.data(), DTypeOf<T>::value, shape, "cpu");
  }
  if (dtype != host.dtype()) host = host.cast(dtype);
  return device == "cpu" ? host : host.to(device);
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(static_cast<size_t>(numel()));
    detail::read_elements(*this, DType::kBool, bytes.data());
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(static_cast<size_t>(numel()));
    detail::read_elements(*this, DTypeOf<T>::value, out.data());
    return out;
  }
}

template <typename T>
T Tensor::item() const {
  if (numel() != 1) throw Error("item() needs a tensor with one element, not shape " + shape_str(shape()));
  return to_vector<T>()[0];
}

}  // namespace nvhcq::tensor
