// The nvhcq command: dispatches to a subcommand, and turns errors into messages
// and exit codes (2 for usage errors, 1 for everything else that failed).

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/commands.h"
#include "base/error.h"
#include "base/version.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: nvhcq <command> [options]\n\n"
                    "nvhcq " NVHCQ_VERSION " runs tensor programs and GGUF LLMs on NVIDIA GPUs\n"
                    "by driving the kernel driver directly.\n\ncommands:\n");
  for (const auto& c : nvhcq::app::commands()) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'nvhcq <command> --help' describes a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(stderr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(stdout);
    return 0;
  }
  if (args[0] == "--version") {
    std::printf("nvhcq %s\n", NVHCQ_VERSION);
    return 0;
  }
  for (const auto& c : nvhcq::app::commands()) {
    if (args[0] != c.name) continue;
    try {
      return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const nvhcq::UsageError& e) {
      std::fprintf(stderr, "nvhcq %s: %s\n", c.name, e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nvhcq %s: error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "nvhcq: unknown command '%s'\n\n", args[0].c_str());
  print_usage(stderr);
  return 2;
}
