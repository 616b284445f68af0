#pragma once
// Tuning knobs from the environment. A variable that is set must hold what it
// names: a bad value is the user's mistake and throws UsageError rather than
// being ignored, so an experiment never runs with a setting it did not ask for.

#include <optional>

namespace nvhcq {

// The integer in `name`, nullopt when it is unset or empty; a value that is
// not an integer from lo to hi throws UsageError.
std::optional<long> env_integer(const char* name, long lo, long hi);

}  // namespace nvhcq
