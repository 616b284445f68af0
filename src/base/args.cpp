#include "base/args.h"

#include <cstdlib>
#include <sstream>

#include "base/error.h"

namespace nvhcq {

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

ArgParser& ArgParser::flag(const std::string& name, const std::string& help, char short_name) {
  specs_.push_back(Spec{name, "", help, "", short_name, false});
  return *this;
}

ArgParser& ArgParser::option(const std::string& name, const std::string& value_name,
                             const std::string& help, const std::string& default_value,
                             char short_name) {
  specs_.push_back(Spec{name, value_name, help, default_value, short_name, true});
  return *this;
}

ArgParser& ArgParser::positional(const std::string& name, const std::string& help, bool required) {
  positionals_.push_back(Positional{name, help, required});
  return *this;
}

const ArgParser::Spec* ArgParser::find(const std::string& token) const {
  for (const auto& s : specs_) {
    if (token == "--" + s.name) return &s;
    if (s.short_name != 0 && token.size() == 2 && token[0] == '-' && token[1] == s.short_name) {
      return &s;
    }
  }
  return nullptr;
}

ArgParser::Result ArgParser::parse(const std::vector<std::string>& args) const {
  Result r;
  for (const auto& s : specs_) {
    if (s.takes_value && !s.default_value.empty()) r.values_[s.name] = s.default_value;
  }
  size_t next_positional = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      r.help_ = true;
      continue;
    }
    // "-" alone is a value (stdin), and negative numbers are values.
    bool looks_like_option = a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9');
    if (looks_like_option) {
      std::string name = a, inline_value;
      bool has_inline = false;
      if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
        name = a.substr(0, eq);
        inline_value = a.substr(eq + 1);
        has_inline = true;
      }
      const Spec* s = find(name);
      if (s == nullptr) {
        throw UsageError("unknown option " + name + " for '" + program_ + "'\n\n" + usage());
      }
      if (!s->takes_value) {
        if (has_inline) throw UsageError("option " + name + " takes no value\n\n" + usage());
        r.flags_[s->name] = true;
        continue;
      }
      if (has_inline) {
        r.values_[s->name] = inline_value;
      } else {
        if (i + 1 >= args.size()) {
          throw UsageError("option " + name + " needs a value (" + s->value_name + ")\n\n" +
                           usage());
        }
        r.values_[s->name] = args[++i];
      }
      continue;
    }
    if (next_positional >= positionals_.size()) {
      throw UsageError("unexpected argument '" + a + "' for '" + program_ + "'\n\n" + usage());
    }
    r.positionals_[positionals_[next_positional++].name] = a;
  }
  if (!r.help_) {
    for (size_t k = next_positional; k < positionals_.size(); ++k) {
      if (positionals_[k].required) {
        throw UsageError("missing argument " + positionals_[k].name + " for '" + program_ +
                         "'\n\n" + usage());
      }
    }
  }
  return r;
}

std::string ArgParser::usage() const {
  std::ostringstream out;
  out << "usage: " << program_;
  if (!specs_.empty()) out << " [options]";
  for (const auto& p : positionals_) out << (p.required ? " " : " [") << p.name << (p.required ? "" : "]");
  out << "\n" << summary_ << "\n";
  if (!positionals_.empty()) {
    out << "\narguments:\n";
    for (const auto& p : positionals_) out << "  " << p.name << "\n      " << p.help << "\n";
  }
  out << "\noptions:\n";
  for (const auto& s : specs_) {
    out << "  ";
    if (s.short_name != 0) out << "-" << s.short_name << ", ";
    out << "--" << s.name;
    if (s.takes_value) out << " " << s.value_name;
    out << "\n      " << s.help;
    if (!s.default_value.empty()) out << " (default: " << s.default_value << ")";
    out << "\n";
  }
  out << "  -h, --help\n      show this help\n";
  return out.str();
}

bool ArgParser::Result::has(const std::string& name) const {
  return values_.count(name) != 0 || flags_.count(name) != 0;
}

std::string ArgParser::Result::get(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string() : it->second;
}

long long ArgParser::Result::get_int(const std::string& name) const {
  std::string v = get(name);
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end == nullptr || *end != '\0') {
    throw UsageError("--" + name + " expects an integer, got '" + v + "'");
  }
  return n;
}

double ArgParser::Result::get_double(const std::string& name) const {
  std::string v = get(name);
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end == nullptr || *end != '\0') {
    throw UsageError("--" + name + " expects a number, got '" + v + "'");
  }
  return d;
}

bool ArgParser::Result::flag(const std::string& name) const { return flags_.count(name) != 0; }

std::optional<std::string> ArgParser::Result::positional(const std::string& name) const {
  auto it = positionals_.find(name);
  if (it == positionals_.end()) return std::nullopt;
  return it->second;
}

}  // namespace nvhcq
