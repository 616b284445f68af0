#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace nvhcq::log {
namespace {

constexpr const char* kNames[] = {"error", "warn", "info", "debug", "trace"};

Level initial_level() {
  Level parsed = Level::kWarn;
  const char* env = std::getenv("NVHCQ_LOG");
  if (env != nullptr && !parse_level(env, &parsed)) {
    std::fprintf(stderr, "nvhcq: NVHCQ_LOG=%s is not a level (error, warn, info, debug, trace)\n",
                 env);
  }
  return parsed;
}

std::atomic<int>& current() {
  static std::atomic<int> value{static_cast<int>(initial_level())};
  return value;
}

}  // namespace

Level level() { return static_cast<Level>(current().load(std::memory_order_relaxed)); }
void set_level(Level lvl) { current().store(static_cast<int>(lvl), std::memory_order_relaxed); }

bool parse_level(const std::string& name, Level* out) {
  for (int i = 0; i < 5; ++i) {
    if (name == kNames[i]) {
      *out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

bool enabled(Level lvl) { return static_cast<int>(lvl) <= current().load(std::memory_order_relaxed); }

void emit(Level lvl, const std::string& message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "nvhcq %s: %s\n", kNames[static_cast<int>(lvl)], message.c_str());
}

}  // namespace nvhcq::log
