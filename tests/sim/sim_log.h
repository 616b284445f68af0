#pragma once
// The simulated kernel's log (what dmesg would show) and its list of
// violations: things a driver or runtime did that real hardware would punish
// (sometimes silently, sometimes by corrupting results). A violation is printed
// at once, loudly, and kept for tests to inspect.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace nvhcq::sim {

class KernelLog {
 public:
  void line(const std::string& text);
  void violation(const std::string& text);
  std::vector<std::string> lines() const;
  std::vector<std::string> violations() const;
  // Lines containing `needle` since the last clear().
  size_t count(const std::string& needle) const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_, violations_;
};

}  // namespace nvhcq::sim
