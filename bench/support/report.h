#pragma once
// What every benchmark program shares: timing statistics, a markdown table on
// stdout, and a JSON file of the same rows (--json PATH).

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace nvhcq::bench {

struct Stats {
  double p50 = 0, p99 = 0, min = 0, mean = 0;
  size_t samples = 0;
};
Stats summarize(std::vector<double> samples);

using Value = std::variant<double, int64_t, std::string>;

// One benchmark's results: rows of named values, printed as a markdown table and
// written as JSON {"benchmark": ..., "device": ..., "rows": [{...}, ...]}.
class Report {
 public:
  Report(std::string benchmark, std::vector<std::string> columns);
  void set_meta(const std::string& key, const std::string& value) { meta_[key] = value; }
  void add_row(std::map<std::string, Value> row) { rows_.push_back(std::move(row)); }
  void print() const;
  void write_json(const std::string& path) const;  // no-op for an empty path

 private:
  std::string benchmark_;
  std::vector<std::string> columns_;
  std::map<std::string, std::string> meta_;
  std::vector<std::map<std::string, Value>> rows_;
};

// Microseconds since an arbitrary start, from the steady clock.
inline double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace nvhcq::bench
