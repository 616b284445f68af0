#pragma once
// A small command-line parser shared by the nvhcq command and the bench programs.
// Options are "--name VALUE", "--name=VALUE", "-x VALUE" or flags; anything
// unknown, a missing value or a missing positional argument throws UsageError.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvhcq {

class ArgParser {
 public:
  ArgParser(std::string program, std::string summary);

  // A boolean flag: present or not.
  ArgParser& flag(const std::string& name, const std::string& help, char short_name = 0);
  // An option with a value; `default_value` is used when it is absent (empty: no default).
  ArgParser& option(const std::string& name, const std::string& value_name, const std::string& help,
                    const std::string& default_value = "", char short_name = 0);
  // A positional argument, in order of declaration.
  ArgParser& positional(const std::string& name, const std::string& help, bool required = true);

  class Result {
   public:
    bool has(const std::string& name) const;
    std::string get(const std::string& name) const;  // option value, default, or ""
    long long get_int(const std::string& name) const;
    double get_double(const std::string& name) const;
    bool flag(const std::string& name) const;
    std::optional<std::string> positional(const std::string& name) const;
    bool help_requested() const { return help_; }

   private:
    friend class ArgParser;
    std::map<std::string, std::string> values_;
    std::map<std::string, bool> flags_;
    std::map<std::string, std::string> positionals_;
    bool help_ = false;
  };

  // Parses args (without the program name). "--help"/"-h" sets help_requested().
  Result parse(const std::vector<std::string>& args) const;
  std::string usage() const;

 private:
  struct Spec {
    std::string name, value_name, help, default_value;
    char short_name = 0;
    bool takes_value = false;
  };
  struct Positional {
    std::string name, help;
    bool required = true;
  };
  const Spec* find(const std::string& token) const;

  std::string program_, summary_;
  std::vector<Spec> specs_;
  std::vector<Positional> positionals_;
};

}  // namespace nvhcq
