#include "cpu/element.h"

namespace nvhcq::cpu {

double read_as_double(const void* data, DType dtype, int64_t index) {
  double out = 0;
  NVHCQ_DISPATCH_DTYPE(dtype, S, out = load_as<double>(static_cast<const S*>(data)[index]));
  return out;
}

int64_t read_as_int64(const void* data, DType dtype, int64_t index) {
  int64_t out = 0;
  NVHCQ_DISPATCH_DTYPE(dtype, S, out = load_as<int64_t>(static_cast<const S*>(data)[index]));
  return out;
}

void write_from_double(void* data, DType dtype, int64_t index, double value) {
  NVHCQ_DISPATCH_DTYPE(dtype, S, static_cast<S*>(data)[index] = store_as<S>(value));
}

void write_from_int64(void* data, DType dtype, int64_t index, int64_t value) {
  NVHCQ_DISPATCH_DTYPE(dtype, S, static_cast<S*>(data)[index] = store_as<S>(value));
}

}  // namespace nvhcq::cpu
