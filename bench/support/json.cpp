#include "support/json.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace nvhcq::bench {

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  Json document() {
    Json v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(pos_, n, word) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }

  Json value(int depth) {
    if (depth > 64) fail("nesting too deep");
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    Json v;
    char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind_ = Json::Kind::kObject;
      if (take('}')) return v;
      do {
        skip_space();
        std::string key = string_body();
        expect(':');
        v.object_[key] = value(depth + 1);
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      ++pos_;
      v.kind_ = Json::Kind::kArray;
      if (take(']')) return v;
      do {
        v.array_.push_back(value(depth + 1));
      } while (take(','));
      expect(']');
    } else if (c == '"') {
      v.kind_ = Json::Kind::kString;
      v.string_ = string_body();
    } else if (literal("true")) {
      v.kind_ = Json::Kind::kBool;
      v.bool_ = true;
    } else if (literal("false")) {
      v.kind_ = Json::Kind::kBool;
    } else if (literal("null")) {
      v.kind_ = Json::Kind::kNull;
    } else {
      const char* start = s_.c_str() + pos_;
      char* end = nullptr;
      double d = std::strtod(start, &end);
      if (end == start) fail("unexpected character");
      pos_ += static_cast<size_t>(end - start);
      v.kind_ = Json::Kind::kNumber;
      v.number_ = d;
    }
    return v;
  }

  std::string string_body() {
    if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
    ++pos_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) fail("short \\u escape");
          unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          // Enough for the ASCII and Latin text the reports hold: UTF-8 encode the BMP code point.
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
          } else {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
          }
          break;
        }
        default:
          out += e;  // \" \\ \/
      }
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

Json Json::parse(const std::string& text) {
  return JsonParser(text).document();
}

Json Json::parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse(ss.str());
  } catch (const FormatError& e) {
    throw FormatError(path + ": " + e.what());
  }
}

const Json& Json::operator[](const std::string& key) const {
  static const Json kNull;
  auto it = object_.find(key);
  return it == object_.end() ? kNull : it->second;
}

double Json::number_or(const std::string& key, double fallback) const {
  const Json& v = (*this)[key];
  return v.is_number() ? v.number() : fallback;
}

std::string Json::string_or(const std::string& key, const std::string& fallback) const {
  const Json& v = (*this)[key];
  return v.is_string() ? v.string() : fallback;
}

}  // namespace nvhcq::bench
