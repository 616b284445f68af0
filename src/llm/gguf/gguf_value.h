#pragma once
// One GGUF metadata value: a scalar, a string, or an array of scalars or strings.
// Values own their data (metadata is small next to tensor data, and owning it lets
// the writer and the reader share one type). Reads are typed and checked: asking
// an f32 for an integer, or a u64 of 2^40 for a u32, throws FormatError naming the
// value, never converts silently.

#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "llm/gguf/gguf_type.h"

namespace nvhcq::llm {

static_assert(std::endian::native == std::endian::little,
              "GGUF data is little-endian; nvhcq reads it in place");

// The GGUF type a C++ scalar type is stored as.
template <typename T>
constexpr GgufType gguf_type_of() {
  if constexpr (std::is_same_v<T, bool>) return GgufType::BOOL;
  else if constexpr (std::is_same_v<T, uint8_t>) return GgufType::U8;
  else if constexpr (std::is_same_v<T, int8_t>) return GgufType::I8;
  else if constexpr (std::is_same_v<T, uint16_t>) return GgufType::U16;
  else if constexpr (std::is_same_v<T, int16_t>) return GgufType::I16;
  else if constexpr (std::is_same_v<T, uint32_t>) return GgufType::U32;
  else if constexpr (std::is_same_v<T, int32_t>) return GgufType::I32;
  else if constexpr (std::is_same_v<T, uint64_t>) return GgufType::U64;
  else if constexpr (std::is_same_v<T, int64_t>) return GgufType::I64;
  else if constexpr (std::is_same_v<T, float>) return GgufType::F32;
  else if constexpr (std::is_same_v<T, double>) return GgufType::F64;
  else static_assert(sizeof(T) == 0, "not a GGUF scalar type");
}

template <typename T>
concept GgufScalar = std::is_same_v<T, bool> || std::is_same_v<T, uint8_t> ||
                     std::is_same_v<T, int8_t> || std::is_same_v<T, uint16_t> ||
                     std::is_same_v<T, int16_t> || std::is_same_v<T, uint32_t> ||
                     std::is_same_v<T, int32_t> || std::is_same_v<T, uint64_t> ||
                     std::is_same_v<T, int64_t> || std::is_same_v<T, float> ||
                     std::is_same_v<T, double>;

template <typename T>
concept GgufInteger = GgufScalar<T> && std::integral<T> && !std::is_same_v<T, bool>;

class GgufValue {
 public:
  GgufValue() = default;  // u8 0; exists so values can live in containers

  template <GgufScalar T>
  static GgufValue scalar(T value) {
    GgufValue v;
    v.type_ = gguf_type_of<T>();
    v.bits_ = 0;
    std::memcpy(&v.bits_, &value, sizeof(T));
    return v;
  }
  static GgufValue string(std::string value);
  template <GgufScalar T>
  static GgufValue array(std::span<const T> values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return raw_array(gguf_type_of<T>(), values.size(), std::move(bytes));
  }
  template <GgufScalar T>
  static GgufValue array(const std::vector<T>& values) {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(values.begin(), values.end());
      return raw_array(GgufType::BOOL, values.size(), std::move(bytes));
    } else {
      return array(std::span<const T>(values));
    }
  }
  static GgufValue string_array(std::vector<std::string> values);
  // An array of fixed-size elements from their packed little-endian bytes (what a
  // file holds). Throws FormatError when the sizes disagree or `element` is not a
  // fixed-size type.
  static GgufValue raw_array(GgufType element, uint64_t count, std::vector<uint8_t> bytes);

  GgufType type() const { return type_; }
  bool is_array() const { return type_ == GgufType::ARRAY; }
  // The element type of an array (meaningless for other values).
  GgufType element_type() const { return element_; }
  // Elements in an array; 1 for any other value.
  uint64_t size() const { return is_array() ? count_ : 1; }

  // Checked reads. `what` names the value in error messages (normally its key).
  const std::string& as_string(std::string_view what = "value") const;
  bool as_bool(std::string_view what = "value") const;
  // Any integer type whose value fits in T.
  template <GgufInteger T>
  T as_int(std::string_view what = "value") const {
    return narrow<T>(integer_bits(what), what);
  }
  // f32 or f64.
  double as_float(std::string_view what = "value") const;

  const std::vector<std::string>& as_strings(std::string_view what = "value") const;
  // The elements of an array of integers (any integer type, each must fit in T),
  // of floats (f32 or f64) or of bools, converted to T.
  template <GgufScalar T>
  std::vector<T> as_array(std::string_view what = "value") const {
    std::vector<T> out;
    out.reserve(checked_array(what, kind_of<T>()));
    for (uint64_t i = 0; i < count_; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        out.push_back(bytes_[i] != 0);
      } else if constexpr (std::is_floating_point_v<T>) {
        out.push_back(static_cast<T>(float_element(i)));
      } else {
        out.push_back(narrow<T>(integer_element(i), what));
      }
    }
    return out;
  }
  // The packed little-endian elements of an array of fixed-size values.
  std::span<const uint8_t> array_bytes() const { return bytes_; }

  // Bytes this value takes in a file after its type id.
  uint64_t encoded_size() const;
  // Appends those bytes (little-endian, as the file holds them).
  void encode(std::vector<uint8_t>& out) const;
  // A short human-readable rendering ("[32000 strings: \"<unk>\", ...]").
  std::string to_display_string(size_t max_elements = 6) const;

  bool operator==(const GgufValue& other) const;

 private:
  // An integer value with its signedness, wide enough for every GGUF integer.
  struct Integer {
    bool negative;
    uint64_t magnitude;  // |value|
  };
  enum class Kind { kInteger, kFloat, kBool };
  template <typename T>
  static constexpr Kind kind_of() {
    if constexpr (std::is_same_v<T, bool>) return Kind::kBool;
    else if constexpr (std::is_floating_point_v<T>) return Kind::kFloat;
    else return Kind::kInteger;
  }

  Integer integer_bits(std::string_view what) const;
  Integer integer_element(uint64_t index) const;
  double float_element(uint64_t index) const;
  // Checks this is an array whose elements convert to `kind`; returns the count.
  size_t checked_array(std::string_view what, Kind kind) const;
  [[noreturn]] static void throw_out_of_range(const Integer& v, std::string_view target,
                                              std::string_view what);

  template <typename T>
  static T narrow(Integer v, std::string_view what) {
    using U = std::make_unsigned_t<T>;
    if (v.negative) {
      if constexpr (std::is_signed_v<T>) {
        // |min| of T is max of T plus one.
        if (v.magnitude <= static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1) {
          return static_cast<T>(0 - static_cast<U>(v.magnitude));
        }
      }
    } else if (v.magnitude <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      return static_cast<T>(v.magnitude);
    }
    throw_out_of_range(v, gguf_type_name(gguf_type_of<T>()), what);
  }

  GgufType type_ = GgufType::U8;
  GgufType element_ = GgufType::U8;
  uint64_t bits_ = 0;  // scalar payload: the value's bytes, zero-extended
  uint64_t count_ = 0;
  std::string string_;
  std::vector<uint8_t> bytes_;  // fixed-size array elements
  std::vector<std::string> strings_;  // string array elements
};

}  // namespace nvhcq::llm
