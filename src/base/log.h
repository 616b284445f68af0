#pragma once
// A small leveled logger. The level comes from NVHCQ_LOG (error, warn, info,
// debug, trace; default warn). Messages go to stderr, one line each.

#include <sstream>
#include <string>

namespace nvhcq::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

Level level();
void set_level(Level level);
// Parses a level name; returns false for an unknown name.
bool parse_level(const std::string& name, Level* out);
bool enabled(Level level);
void emit(Level level, const std::string& message);

template <typename... Args>
void write(Level lvl, const Args&... args) {
  if (!enabled(lvl)) return;
  std::ostringstream out;
  (out << ... << args);
  emit(lvl, out.str());
}

template <typename... Args> void error(const Args&... a) { write(Level::kError, a...); }
template <typename... Args> void warn(const Args&... a) { write(Level::kWarn, a...); }
template <typename... Args> void info(const Args&... a) { write(Level::kInfo, a...); }
template <typename... Args> void debug(const Args&... a) { write(Level::kDebug, a...); }
template <typename... Args> void trace(const Args&... a) { write(Level::kTrace, a...); }

}  // namespace nvhcq::log
