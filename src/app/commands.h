#pragma once
// The nvhcq subcommands. Each takes its arguments (without the command name),
// returns the process exit status and throws UsageError for bad arguments.

#include <span>
#include <string>
#include <vector>

namespace nvhcq::app {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

std::span<const Command> commands();

int run_info(const Args& args);
int run_run(const Args& args);
int run_bench(const Args& args);
int run_synth(const Args& args);
int run_quantize(const Args& args);
int run_tokenize(const Args& args);
int run_serve(const Args& args);
int run_kernel_log(const Args& args);

}  // namespace nvhcq::app
