#pragma once
// A small JSON reader for the files the benchmarks write (Report::write_json),
// so bench_compare can combine them: objects, arrays, strings, numbers, true,
// false, null. Malformed input is a FormatError naming the offset.

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nvhcq::bench {

class Json {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  static Json parse(const std::string& text);
  static Json parse_file(const std::string& path);  // throws Error when unreadable

  Kind kind() const { return kind_; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  double number() const { return number_; }
  const std::string& string() const { return string_; }
  const std::vector<Json>& array() const { return array_; }
  const std::map<std::string, Json>& object() const { return object_; }
  // Member `key` of an object, or a null value when absent (or not an object).
  const Json& operator[](const std::string& key) const;
  bool has(const std::string& key) const { return object_.count(key) != 0; }
  // The member as a number / string, or `fallback` when absent or of another kind.
  double number_or(const std::string& key, double fallback) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<Json> array_;
  std::map<std::string, Json> object_;
};

}  // namespace nvhcq::bench
