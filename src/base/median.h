#pragma once
// The median of a set of measurements (the mean of the middle two for an even
// count; 0 for none).

#include <algorithm>
#include <vector>

namespace nvhcq {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace nvhcq
