#pragma once
// The op suite's parameterized fixtures and case lists. The TEST_P bodies live in
// the *_cases.cpp files (compiled into test_ops and test_gpu); each backend
// instantiates the suites in its own file, e.g. tests/ops/cpu_instances.cpp:
//
//   INSTANTIATE_TEST_SUITE_P(cpu, UnaryOps, ::testing::ValuesIn(with_backend("cpu", unary_cases())),
//                            param_name);

#include <vector>

#include "ops/op_test_util.h"

namespace nvhcq::optest {

class UnaryOps : public OpSuite {};
class BinaryOps : public OpSuite {};
class Reductions : public OpSuite {};
class Movement : public OpSuite {};
class Indexing : public OpSuite {};
class Linalg : public OpSuite {};
class NeuralNet : public OpSuite {};
class Creation : public OpSuite {};
class OpErrors : public OpSuite {};
class Models : public OpSuite {};

std::vector<OpCase> unary_cases();
std::vector<OpCase> binary_cases();
std::vector<OpCase> reduction_cases();
std::vector<OpCase> movement_cases();
std::vector<OpCase> indexing_cases();
std::vector<OpCase> linalg_cases();
std::vector<OpCase> nn_cases();
std::vector<OpCase> creation_cases();
std::vector<OpCase> error_cases();
std::vector<OpCase> model_cases();

// Wraps an exact integer result into the range of an integer dtype (two's
// complement), or maps it to 0/1 for bool; floats pass through.
inline double wrap_to(double x, DType t) {
  if (tensor::is_float(t)) return x;
  if (t == DType::kBool) return x != 0 ? 1 : 0;
  const int bits = static_cast<int>(tensor::dtype_size(t)) * 8;
  if (bits == 64) return x;
  const int64_t mod = int64_t{1} << bits;
  int64_t v = static_cast<int64_t>(x) % mod;
  if (v < 0) v += mod;
  if (t != DType::kU8 && v >= mod / 2) v -= mod;
  return static_cast<double>(v);
}

inline Ref wrap_to(Ref r, DType t) {
  for (double& x : r.v) x = wrap_to(x, t);
  return r;
}

inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> v = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64};
  return v;
}
inline const std::vector<DType>& int_dtypes() {
  static const std::vector<DType> v = {DType::kI8, DType::kU8, DType::kI16, DType::kI32, DType::kI64};
  return v;
}

}  // namespace nvhcq::optest
