#include "llm/gguf/gguf_value.h"

#include <cstdio>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

bool is_integer_type(GgufType t) {
  switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::U16:
    case GgufType::I16:
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::U64:
    case GgufType::I64: return true;
    default: return false;
  }
}

bool is_float_type(GgufType t) { return t == GgufType::F32 || t == GgufType::F64; }

std::string describe(GgufType type, GgufType element) {
  if (type != GgufType::ARRAY) return std::string(gguf_type_name(type));
  return "array of " + std::string(gguf_type_name(element));
}

std::string quoted(std::string_view what) {
  std::string out = "'";
  out += what;
  out += "'";
  return out;
}

// Reads one fixed-size value of `type` from `p` as a signed/unsigned magnitude.
void load_integer(const uint8_t* p, GgufType type, bool* negative, uint64_t* magnitude) {
  int64_t s = 0;
  uint64_t u = 0;
  bool is_signed = false;
  switch (type) {
    case GgufType::U8: u = p[0]; break;
    case GgufType::I8: s = static_cast<int8_t>(p[0]); is_signed = true; break;
    case GgufType::U16: { uint16_t v; std::memcpy(&v, p, 2); u = v; break; }
    case GgufType::I16: { int16_t v; std::memcpy(&v, p, 2); s = v; is_signed = true; break; }
    case GgufType::U32: { uint32_t v; std::memcpy(&v, p, 4); u = v; break; }
    case GgufType::I32: { int32_t v; std::memcpy(&v, p, 4); s = v; is_signed = true; break; }
    case GgufType::U64: std::memcpy(&u, p, 8); break;
    case GgufType::I64: std::memcpy(&s, p, 8); is_signed = true; break;
    default: break;
  }
  if (is_signed && s < 0) {
    *negative = true;
    *magnitude = 0 - static_cast<uint64_t>(s);
  } else {
    *negative = false;
    *magnitude = is_signed ? static_cast<uint64_t>(s) : u;
  }
}

double load_float(const uint8_t* p, GgufType type) {
  if (type == GgufType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

void append_u64(std::vector<uint8_t>& out, uint64_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + 8);
}

void append_u32(std::vector<uint8_t>& out, uint32_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + 4);
}

void append_string(std::vector<uint8_t>& out, const std::string& s) {
  append_u64(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

std::string display_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

GgufValue GgufValue::string(std::string value) {
  GgufValue v;
  v.type_ = GgufType::STRING;
  v.string_ = std::move(value);
  return v;
}

GgufValue GgufValue::string_array(std::vector<std::string> values) {
  GgufValue v;
  v.type_ = GgufType::ARRAY;
  v.element_ = GgufType::STRING;
  v.count_ = values.size();
  v.strings_ = std::move(values);
  return v;
}

GgufValue GgufValue::raw_array(GgufType element, uint64_t count, std::vector<uint8_t> bytes) {
  const size_t size = gguf_type_size(element);
  if (size == 0) {
    throw FormatError("raw_array needs a fixed-size element type, not " +
                      std::string(gguf_type_name(element)));
  }
  if (count > bytes.size() / size || count * size != bytes.size()) {
    throw FormatError("array of " + std::to_string(count) + " " +
                      std::string(gguf_type_name(element)) + " needs " +
                      std::to_string(count * size) + " bytes, got " + std::to_string(bytes.size()));
  }
  GgufValue v;
  v.type_ = GgufType::ARRAY;
  v.element_ = element;
  v.count_ = count;
  v.bytes_ = std::move(bytes);
  return v;
}

const std::string& GgufValue::as_string(std::string_view what) const {
  if (type_ != GgufType::STRING) {
    throw FormatError("metadata " + quoted(what) + " is " + describe(type_, element_) +
                      ", expected a string");
  }
  return string_;
}

bool GgufValue::as_bool(std::string_view what) const {
  if (type_ != GgufType::BOOL) {
    throw FormatError("metadata " + quoted(what) + " is " + describe(type_, element_) +
                      ", expected a bool");
  }
  return (bits_ & 0xff) != 0;
}

double GgufValue::as_float(std::string_view what) const {
  if (!is_float_type(type_)) {
    throw FormatError("metadata " + quoted(what) + " is " + describe(type_, element_) +
                      ", expected a float");
  }
  return load_float(reinterpret_cast<const uint8_t*>(&bits_), type_);
}

const std::vector<std::string>& GgufValue::as_strings(std::string_view what) const {
  if (type_ != GgufType::ARRAY || element_ != GgufType::STRING) {
    throw FormatError("metadata " + quoted(what) + " is " + describe(type_, element_) +
                      ", expected an array of strings");
  }
  return strings_;
}

GgufValue::Integer GgufValue::integer_bits(std::string_view what) const {
  if (!is_integer_type(type_)) {
    throw FormatError("metadata " + quoted(what) + " is " + describe(type_, element_) +
                      ", expected an integer");
  }
  Integer v{};
  load_integer(reinterpret_cast<const uint8_t*>(&bits_), type_, &v.negative, &v.magnitude);
  return v;
}

GgufValue::Integer GgufValue::integer_element(uint64_t index) const {
  Integer v{};
  load_integer(bytes_.data() + index * gguf_type_size(element_), element_, &v.negative,
               &v.magnitude);
  return v;
}

double GgufValue::float_element(uint64_t index) const {
  return load_float(bytes_.data() + index * gguf_type_size(element_), element_);
}

size_t GgufValue::checked_array(std::string_view what, Kind kind) const {
  bool ok = type_ == GgufType::ARRAY;
  const char* expected = "";
  switch (kind) {
    case Kind::kInteger: ok = ok && is_integer_type(element_); expected = "integers"; break;
    case Kind::kFloat: ok = ok && is_float_type(element_); expected = "floats"; break;
    case Kind::kBool: ok = ok && element_ == GgufType::BOOL; expected = "bools"; break;
  }
  if (!ok) {
    throw FormatError("metadata " + quoted(what) + " is " + describe(type_, element_) +
                      ", expected an array of " + expected);
  }
  return static_cast<size_t>(count_);
}

void GgufValue::throw_out_of_range(const Integer& v, std::string_view target,
                                   std::string_view what) {
  std::string value = (v.negative ? "-" : "") + std::to_string(v.magnitude);
  throw FormatError("metadata " + quoted(what) + " holds " + value + ", which does not fit in " +
                    std::string(target));
}

uint64_t GgufValue::encoded_size() const {
  switch (type_) {
    case GgufType::STRING: return 8 + string_.size();
    case GgufType::ARRAY: {
      uint64_t n = 12;
      if (element_ == GgufType::STRING) {
        for (const auto& s : strings_) n += 8 + s.size();
      } else {
        n += bytes_.size();
      }
      return n;
    }
    default: return gguf_type_size(type_);
  }
}

void GgufValue::encode(std::vector<uint8_t>& out) const {
  switch (type_) {
    case GgufType::STRING: append_string(out, string_); return;
    case GgufType::ARRAY:
      append_u32(out, static_cast<uint32_t>(element_));
      append_u64(out, count_);
      if (element_ == GgufType::STRING) {
        for (const auto& s : strings_) append_string(out, s);
      } else {
        out.insert(out.end(), bytes_.begin(), bytes_.end());
      }
      return;
    default: {
      const auto* p = reinterpret_cast<const uint8_t*>(&bits_);
      out.insert(out.end(), p, p + gguf_type_size(type_));
      return;
    }
  }
}

std::string GgufValue::to_display_string(size_t max_elements) const {
  auto scalar_text = [](const uint8_t* p, GgufType t) -> std::string {
    if (is_integer_type(t)) {
      bool neg = false;
      uint64_t mag = 0;
      load_integer(p, t, &neg, &mag);
      return (neg ? "-" : "") + std::to_string(mag);
    }
    if (is_float_type(t)) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.9g", load_float(p, t));
      return buf;
    }
    if (t == GgufType::BOOL) return p[0] ? "true" : "false";
    return "?";
  };
  if (type_ == GgufType::STRING) return display_string(string_);
  if (type_ != GgufType::ARRAY) {
    return scalar_text(reinterpret_cast<const uint8_t*>(&bits_), type_);
  }
  std::string out = "[" + std::to_string(count_) + " " + std::string(gguf_type_name(element_)) +
                    (count_ == 1 ? "" : "s") + (count_ ? ": " : "");
  const uint64_t shown = count_ < max_elements ? count_ : max_elements;
  for (uint64_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    if (element_ == GgufType::STRING) {
      out += display_string(strings_[i]);
    } else {
      out += scalar_text(bytes_.data() + i * gguf_type_size(element_), element_);
    }
  }
  if (shown < count_) out += ", ...";
  return out + "]";
}

bool GgufValue::operator==(const GgufValue& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case GgufType::STRING: return string_ == other.string_;
    case GgufType::ARRAY:
      return element_ == other.element_ && count_ == other.count_ && bytes_ == other.bytes_ &&
             strings_ == other.strings_;
    default: {
      const uint64_t mask = gguf_type_size(type_) == 8
                                ? ~uint64_t{0}
                                : (uint64_t{1} << (8 * gguf_type_size(type_))) - 1;
      return (bits_ & mask) == (other.bits_ & mask);
    }
  }
}

}  // namespace nvhcq::llm
