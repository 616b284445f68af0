#pragma once
// Runs another program with a time limit, its output (stdout and stderr) going
// to a log file: how bench_compare runs the benchmark programs, each in a
// process of its own (its own GPU contexts; a crash stays contained).

#include <string>
#include <vector>

namespace nvhcq::bench {

struct ProcessResult {
  int exit_code = -1;  // the program's status, or -1 when it did not exit normally
  int signal = 0;      // the signal that ended it, if any
  bool timed_out = false;
  double seconds = 0;
  std::string error;  // why it could not be started, if it was not
  bool ok() const { return error.empty() && !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;
};

// argv[0] is the program's path. `cwd` empty: the current directory.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path,
                          double timeout_s, const std::string& cwd = "");

// The folder of the running program (/proc/self/exe).
std::string executable_dir();
// The path of executable `name` found on $PATH, or "".
std::string find_on_path(const std::string& name);
// The last `lines` lines of a text file.
std::string tail_of_file(const std::string& path, int lines);

}  // namespace nvhcq::bench
