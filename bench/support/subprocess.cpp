#include "support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/report.h"

namespace nvhcq::bench {

std::string ProcessResult::describe() const {
  if (!error.empty()) return error;
  if (timed_out) return "timed out after " + std::to_string(static_cast<int>(seconds)) + " s";
  if (signal != 0)
    return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) +
           ")";
  return "exit code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path,
                          double timeout_s, const std::string& cwd) {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "no program";
    return r;
  }
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    r.error = "cannot write " + log_path + ": " + std::strerror(errno);
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  double start = now_us();
  pid_t pid = ::fork();
  if (pid < 0) {
    r.error = std::string("fork failed: ") + std::strerror(errno);
    ::close(log_fd);
    return r;
  }
  if (pid == 0) {
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
    ::execv(args[0], args.data());
    const char* msg = "exec failed\n";
    ssize_t ignored = ::write(2, msg, std::strlen(msg));
    (void)ignored;
    _exit(127);
  }
  ::close(log_fd);
  int status = 0;
  bool terminated = false;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      r.error = std::string("waitpid failed: ") + std::strerror(errno);
      return r;
    }
    double elapsed = (now_us() - start) * 1e-6;
    if (!terminated && elapsed > timeout_s) {
      r.timed_out = true;
      ::kill(pid, SIGTERM);
      terminated = true;
    } else if (terminated && elapsed > timeout_s + 10) {
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  r.seconds = (now_us() - start) * 1e-6;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    if (r.exit_code == 127 && !std::filesystem::exists(argv[0]))
      r.error = argv[0] + " does not exist";
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

std::string executable_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return p.parent_path().string();
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string p(path);
  size_t start = 0;
  while (start <= p.size()) {
    size_t colon = p.find(':', start);
    if (colon == std::string::npos) colon = p.size();
    std::string dir = p.substr(start, colon - start);
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
    start = colon + 1;
  }
  return "";
}

std::string tail_of_file(const std::string& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += l + "\n";
  return out;
}

}  // namespace nvhcq::bench
