#pragma once
// Scalar: a number given to a tensor op (a constant, a fill value, a bound). It
// keeps its kind, so integers stay exact (int64) and bools stay bools.

#include <cstdint>
#include <string>
#include <type_traits>

namespace nvhcq::tensor {

class Scalar {
 public:
  enum class Kind : uint8_t { kBool, kInt, kFloat };

  Scalar() : kind_(Kind::kInt), i_(0), f_(0) {}
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit by design, so ops accept plain numbers
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::kBool;
      i_ = v ? 1 : 0;
      f_ = i_;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::kInt;
      i_ = static_cast<int64_t>(v);
      f_ = static_cast<double>(v);
    } else {
      kind_ = Kind::kFloat;
      f_ = static_cast<double>(v);
      i_ = 0;
    }
  }

  Kind kind() const { return kind_; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  double to_double() const { return kind_ == Kind::kFloat ? f_ : static_cast<double>(i_); }
  // Floats truncate toward zero, saturating (NaN gives 0).
  int64_t to_int() const;
  std::string to_string() const;
  bool operator==(const Scalar& o) const { return kind_ == o.kind_ && i_ == o.i_ && (f_ == o.f_ || (f_ != f_ && o.f_ != o.f_)); }

 private:
  Kind kind_;
  int64_t i_;
  double f_;
};

}  // namespace nvhcq::tensor
