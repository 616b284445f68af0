#pragma once
// nvhcq::Error: every failure nvhcq reports is one of these. It carries what
// failed, the call that failed (an ioctl, a library function, a file), the status
// the call returned and a hint for the user, so a message can say all four.

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nvhcq {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string what, std::string call = {}, int64_t status = 0, std::string hint = {});

  const std::string& message() const { return message_; }
  const std::string& call() const { return call_; }
  int64_t status() const { return status_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string message_, call_, hint_;
  int64_t status_;
};

// The user asked for something nvhcq cannot parse: a bad flag, a missing argument.
// The command line prints the message with usage and exits with status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A device, the driver or a device allocation ran out of memory.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// The GPU did not finish in time or reported a fault; what() carries the fault report.
class GpuFaultError : public Error {
 public:
  using Error::Error;
};

// Input data (a file, a tensor shape, a format) is malformed or unsupported.
class FormatError : public Error {
 public:
  using Error::Error;
};

// Throws Error with errno's text when `ok` is false. For system calls.
void check_errno(bool ok, const std::string& what, const std::string& call);

}  // namespace nvhcq
