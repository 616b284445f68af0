#include "sim/sim_log.h"

#include <cstdio>

namespace nvhcq::sim {

void KernelLog::line(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.push_back(text);
}

void KernelLog::violation(const std::string& text) {
  std::fprintf(stderr, "[sim] VIOLATION: %s\n", text.c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.push_back("violation: " + text);
  violations_.push_back(text);
}

std::vector<std::string> KernelLog::lines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lines_;
}

std::vector<std::string> KernelLog::violations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return violations_;
}

size_t KernelLog::count(const std::string& needle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& l : lines_) n += l.find(needle) != std::string::npos;
  return n;
}

void KernelLog::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.clear();
  violations_.clear();
}

}  // namespace nvhcq::sim
