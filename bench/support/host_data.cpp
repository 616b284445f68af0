#include "support/host_data.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "cpu/half.h"

namespace nvhcq::bench {

using kernels::GemmType;

std::vector<uint8_t> encode(GemmType type, const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * kernels::gemm_element_bytes(type));
  if (type == GemmType::kF32) {
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  auto* bits = reinterpret_cast<uint16_t*>(out.data());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] =
        type == GemmType::kF16 ? cpu::float_to_half(values[i]) : cpu::float_to_bf16(values[i]);
  }
  return out;
}

std::vector<float> decode(GemmType type, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> out(n);
  if (type == GemmType::kF32) {
    std::memcpy(out.data(), bytes.data(), n * 4);
    return out;
  }
  const auto* bits = reinterpret_cast<const uint16_t*>(bytes.data());
  for (size_t i = 0; i < n; ++i) {
    out[i] = type == GemmType::kF16 ? cpu::half_to_float(bits[i]) : cpu::bf16_to_float(bits[i]);
  }
  return out;
}

HostTensor random_tensor(GemmType type, size_t n, uint64_t seed, float lo, float hi) {
  HostTensor t;
  t.type = type;
  t.values.resize(n);
  Random rng(seed);
  for (auto& v : t.values) v = rng.uniform(lo, hi);
  t.bytes = encode(type, t.values);
  if (type != GemmType::kF32) t.values = decode(type, t.bytes, n);  // the rounded values
  return t;
}

std::string Agreement::describe() const {
  std::ostringstream o;
  o << "relative error " << rel_error << " over " << compared << " entries";
  if (non_finite > 0) o << ", " << non_finite << " NaN/inf";
  return o.str();
}

Agreement check_gemm(const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c, uint32_t m, uint32_t n, uint32_t k,
                     uint64_t full_limit, size_t samples) {
  Agreement r;
  double num = 0, den = 0;
  auto check_entry = [&](uint32_t i, uint32_t j) {
    double ref = 0;
    const float* arow = a.data() + size_t{i} * k;
    for (uint32_t kk = 0; kk < k; ++kk)
      ref += static_cast<double>(arow[kk]) * b[size_t{kk} * n + j];
    double got = c[size_t{i} * n + j];
    ++r.compared;
    if (!std::isfinite(got)) {
      ++r.non_finite;
      return;
    }
    num += (got - ref) * (got - ref);
    den += ref * ref;
  };
  if (uint64_t{m} * n * k <= full_limit) {
    // Row by row, accumulating along k with B's rows: cache-friendly.
    std::vector<double> row(n);
    for (uint32_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (uint32_t kk = 0; kk < k; ++kk) {
        double av = a[size_t{i} * k + kk];
        const float* brow = b.data() + size_t{kk} * n;
        for (uint32_t j = 0; j < n; ++j) row[j] += av * brow[j];
      }
      for (uint32_t j = 0; j < n; ++j) {
        double got = c[size_t{i} * n + j];
        ++r.compared;
        if (!std::isfinite(got)) {
          ++r.non_finite;
          continue;
        }
        num += (got - row[j]) * (got - row[j]);
        den += row[j] * row[j];
      }
    }
  } else {
    Random rng(uint64_t{m} * 1000003 + n * 1009 + k);
    for (size_t s = 0; s < samples; ++s)
      check_entry(static_cast<uint32_t>(rng.next() % m), static_cast<uint32_t>(rng.next() % n));
    for (uint32_t j = 0; j < n; j += std::max<uint32_t>(1, n / 512)) check_entry(m - 1, j);
    for (uint32_t i = 0; i < m; i += std::max<uint32_t>(1, m / 512)) check_entry(i, n - 1);
    check_entry(m - 1, n - 1);
  }
  r.rel_error = std::sqrt(num / (den > 0 ? den : 1));
  return r;
}

double gemm_tolerance(GemmType type, uint32_t k) {
  switch (type) {
    case GemmType::kF32:
      return 1e-6 + 4e-7 * std::sqrt(static_cast<double>(k));
    case GemmType::kF16:
      return 5e-3;
    case GemmType::kBF16:
      return 1e-2;
  }
  return 0;
}

}  // namespace nvhcq::bench
