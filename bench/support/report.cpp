#include "support/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

#include "base/error.h"

namespace nvhcq::bench {
namespace {

std::string format(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[64];
    double a = *d < 0 ? -*d : *d;
    std::snprintf(buf, sizeof(buf), a >= 1000 ? "%.0f" : a >= 10 ? "%.1f" : "%.3g", *d);
    return buf;
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string json_value(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    std::ostringstream o;
    o.precision(9);
    o << *d;
    return o.str();
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return json_string(std::get<std::string>(v));
}

}  // namespace

Stats summarize(std::vector<double> s) {
  Stats st;
  st.samples = s.size();
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  auto pct = [&](double p) { return s[std::min(s.size() - 1, static_cast<size_t>(p * (s.size() - 1) + 0.5))]; };
  st.p50 = pct(0.5);
  st.p99 = pct(0.99);
  st.min = s.front();
  st.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  return st;
}

Report::Report(std::string benchmark, std::vector<std::string> columns)
    : benchmark_(std::move(benchmark)), columns_(std::move(columns)) {}

void Report::print() const {
  std::printf("\n## %s\n\n", benchmark_.c_str());
  for (const auto& [k, v] : meta_) std::printf("- %s: %s\n", k.c_str(), v.c_str());
  std::printf("\n|");
  for (const auto& c : columns_) std::printf(" %s |", c.c_str());
  std::printf("\n|");
  for (size_t i = 0; i < columns_.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& row : rows_) {
    std::printf("|");
    for (const auto& c : columns_) {
      auto it = row.find(c);
      std::printf(" %s |", it == row.end() ? "" : format(it->second).c_str());
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

void Report::write_json(const std::string& path) const {
  if (path.empty()) return;
  std::ofstream out(path);
  if (!out) throw Error("cannot write " + path);
  out << "{\"benchmark\": " << json_string(benchmark_);
  for (const auto& [k, v] : meta_) out << ", " << json_string(k) << ": " << json_string(v);
  out << ", \"rows\": [";
  for (size_t r = 0; r < rows_.size(); ++r) {
    out << (r ? ", " : "") << "{";
    bool first = true;
    for (const auto& [k, v] : rows_[r]) {
      out << (first ? "" : ", ") << json_string(k) << ": " << json_value(v);
      first = false;
    }
    out << "}";
  }
  out << "]}\n";
}

}  // namespace nvhcq::bench
