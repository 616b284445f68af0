#pragma once
// The key/value metadata of a GGUF file, in file order, with typed accessors.
// get_*() is for keys a caller requires: a missing key or a value of the wrong type
// throws FormatError naming the key. find_*() is for optional keys: nullopt when the
// key is absent, FormatError when it is present with the wrong type (a present but
// wrong value is a broken file, not an absent one).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llm/gguf/gguf_value.h"

namespace nvhcq::llm {

class GgufMetadata {
 public:
  using Entry = std::pair<std::string, GgufValue>;

  // Sets `key`, replacing an existing value in place (file order is kept).
  void set(std::string key, GgufValue value);
  template <GgufScalar T>
  void set_scalar(std::string key, T value) {
    set(std::move(key), GgufValue::scalar(value));
  }
  void set_string(std::string key, std::string value) {
    set(std::move(key), GgufValue::string(std::move(value)));
  }
  // Removes `key`; returns whether it was present.
  bool erase(std::string_view key);

  bool contains(std::string_view key) const { return index_.find(key) != index_.end(); }
  const GgufValue* find(std::string_view key) const;
  // The value of a required key; FormatError "missing metadata key 'k'" otherwise.
  const GgufValue& at(std::string_view key) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }

  // Required scalars: integers convert from any integer type when the value fits.
  template <GgufScalar T>
  T get(std::string_view key) const {
    return read<T>(at(key), key);
  }
  // Optional scalars.
  template <GgufScalar T>
  std::optional<T> find_as(std::string_view key) const {
    const GgufValue* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read<T>(*v, key);
  }

  uint32_t get_u32(std::string_view key) const { return get<uint32_t>(key); }
  int32_t get_i32(std::string_view key) const { return get<int32_t>(key); }
  uint64_t get_u64(std::string_view key) const { return get<uint64_t>(key); }
  int64_t get_i64(std::string_view key) const { return get<int64_t>(key); }
  float get_f32(std::string_view key) const { return get<float>(key); }
  double get_f64(std::string_view key) const { return get<double>(key); }
  bool get_bool(std::string_view key) const { return get<bool>(key); }
  const std::string& get_string(std::string_view key) const { return at(key).as_string(key); }

  std::optional<uint32_t> find_u32(std::string_view key) const { return find_as<uint32_t>(key); }
  std::optional<int32_t> find_i32(std::string_view key) const { return find_as<int32_t>(key); }
  std::optional<uint64_t> find_u64(std::string_view key) const { return find_as<uint64_t>(key); }
  std::optional<float> find_f32(std::string_view key) const { return find_as<float>(key); }
  std::optional<bool> find_bool(std::string_view key) const { return find_as<bool>(key); }
  std::optional<std::string> find_string(std::string_view key) const;

  // Arrays.
  const std::vector<std::string>& get_string_array(std::string_view key) const {
    return at(key).as_strings(key);
  }
  template <GgufScalar T>
  std::vector<T> get_array(std::string_view key) const {
    return at(key).as_array<T>(key);
  }
  std::vector<float> get_f32_array(std::string_view key) const { return get_array<float>(key); }
  std::vector<int32_t> get_i32_array(std::string_view key) const {
    return get_array<int32_t>(key);
  }
  // Elements of an array key (FormatError when the key is not an array).
  uint64_t get_array_size(std::string_view key) const;

 private:
  template <GgufScalar T>
  static T read(const GgufValue& v, std::string_view key) {
    if constexpr (std::is_same_v<T, bool>) return v.as_bool(key);
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v.as_float(key));
    else return v.as_int<T>(key);
  }

  std::vector<Entry> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // key -> position in entries_
};

}  // namespace nvhcq::llm
