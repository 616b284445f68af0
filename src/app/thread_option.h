#pragma once
// The --threads option the CPU-heavy commands share (bench, quantize, synth).

#include "base/args.h"

namespace nvhcq::app {

// --threads when given (1..4096, else UsageError), else all cores or NVHCQ_THREADS.
int thread_count_option(const ArgParser::Result& r);

}  // namespace nvhcq::app
