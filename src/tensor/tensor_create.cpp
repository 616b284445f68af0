// Tensor creation: constants, ranges, identity matrices and Philox random draws.
#include <cmath>

#include "base/error.h"
#include "cpu/element.h"
#include "cpu/philox.h"
#include "tensor/graph_builder.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

// Builds a host array of `dtype` with fill(i) -> value, then uploads it.
template <typename F>
Tensor host_tensor(const Shape& shape, DType dtype, const std::string& device, F fill) {
  check_shape(shape, "creation");
  std::vector<uint8_t> bytes(static_cast<size_t>(numel(shape)) * dtype_size(dtype));
  fill(bytes.data());
  return Tensor::from_data(bytes.data(), dtype, shape, device);
}

}  // namespace

Tensor Tensor::scalar(const Scalar& value, std::optional<DType> dtype, const std::string& device) {
  return build::constant(value, dtype.value_or(default_dtype(value)), {}, device);
}

Tensor Tensor::full(const Shape& shape, const Scalar& value, std::optional<DType> dtype, const std::string& device) {
  check_shape(shape, "full");
  return build::constant(value, dtype.value_or(default_dtype(value)), shape, device);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) { return full(shape, 0, dtype, device); }
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) { return full(shape, 1, dtype, device); }
Tensor Tensor::zeros_like() const { return full(shape(), 0, dtype(), device()); }
Tensor Tensor::ones_like() const { return full(shape(), 1, dtype(), device()); }
Tensor Tensor::full_like(const Scalar& value) const { return full(shape(), value, dtype(), device()); }

Tensor Tensor::arange(const Scalar& start, const Scalar& stop, const Scalar& step, std::optional<DType> dtype,
                      const std::string& device) {
  const bool all_int = !start.is_float() && !stop.is_float() && !step.is_float();
  const DType t = dtype.value_or(all_int ? kDefaultInt : kDefaultFloat);
  if (step.to_double() == 0) throw Error("arange: step must not be zero");
  if (all_int) {
    const int64_t a = start.to_int(), b = stop.to_int(), s = step.to_int();
    int64_t n = s > 0 ? (b - a + s - 1) / s : (a - b - s - 1) / (-s);
    n = std::max<int64_t>(n, 0);
    return host_tensor({n}, t, device, [&](void* p) {
      for (int64_t i = 0; i < n; ++i) cpu::write_from_int64(p, t, i, a + i * s);
    });
  }
  const double a = start.to_double(), b = stop.to_double(), s = step.to_double();
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(s)) throw Error("arange: bounds must be finite");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((b - a) / s)));
  return host_tensor({n}, t, device, [&](void* p) {
    for (int64_t i = 0; i < n; ++i) cpu::write_from_double(p, t, i, a + static_cast<double>(i) * s);
  });
}

Tensor Tensor::arange(int64_t stop, DType dtype, const std::string& device) {
  return arange(int64_t{0}, stop, int64_t{1}, dtype, device);
}

Tensor Tensor::linspace(double start, double end, int64_t steps, DType dtype, const std::string& device) {
  if (steps < 0) throw Error("linspace: steps must be >= 0, got " + std::to_string(steps));
  return host_tensor({steps}, dtype, device, [&](void* p) {
    for (int64_t i = 0; i < steps; ++i) {
      // Evaluated from both ends so the last value is exactly `end`.
      const double t = steps == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(steps - 1);
      const double v = i < steps / 2 ? start + (end - start) * t : end - (end - start) * (1.0 - t);
      cpu::write_from_double(p, dtype, i, v);
    }
  });
}

Tensor Tensor::eye(int64_t n, int64_t m, DType dtype, const std::string& device) {
  if (m < 0) m = n;
  if (n < 0) throw Error("eye: size must be >= 0, got " + std::to_string(n));
  return host_tensor({n, m}, dtype, device, [&](void* p) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) cpu::write_from_int64(p, dtype, i * m + j, i == j ? 1 : 0);
  });
}

Tensor Tensor::rand(const Shape& shape, uint64_t seed, DType dtype, const std::string& device) {
  if (!is_float(dtype)) build::unsupported_dtype("rand", dtype);
  return host_tensor(shape, dtype, device, [&](void* p) { cpu::philox_uniform(seed, 0, tensor::numel(shape), dtype, p); });
}

Tensor Tensor::randn(const Shape& shape, uint64_t seed, DType dtype, const std::string& device) {
  if (!is_float(dtype)) build::unsupported_dtype("randn", dtype);
  return host_tensor(shape, dtype, device, [&](void* p) { cpu::philox_normal(seed, 0, tensor::numel(shape), dtype, p); });
}

Tensor Tensor::randint(int64_t low, int64_t high, const Shape& shape, uint64_t seed, DType dtype,
                       const std::string& device) {
  if (is_float(dtype) || dtype == DType::kBool) build::unsupported_dtype("randint", dtype);
  if (high <= low) {
    throw Error("randint: low must be below high, got [" + std::to_string(low) + ", " + std::to_string(high) + ")");
  }
  return host_tensor(shape, dtype, device,
                     [&](void* p) { cpu::philox_randint(seed, 0, tensor::numel(shape), low, high, dtype, p); });
}

}  // namespace nvhcq::tensor
