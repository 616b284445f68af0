#include "app/thread_option.h"

#include "base/error.h"
#include "cpu/thread_pool.h"

namespace nvhcq::app {

int thread_count_option(const ArgParser::Result& r) {
  if (r.get("threads").empty()) return cpu::default_thread_count();
  const long long t = r.get_int("threads");
  if (t < 1 || t > 4096) throw UsageError("--threads must be in 1..4096");
  return static_cast<int>(t);
}

}  // namespace nvhcq::app
