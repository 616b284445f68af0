#include "base/error.h"

#include <cerrno>
#include <cstring>

namespace nvhcq {
namespace {

std::string compose(const std::string& what, const std::string& call, int64_t status,
                    const std::string& hint) {
  std::string text = what;
  if (!call.empty()) {
    text += " [" + call;
    if (status != 0) text += " -> " + std::to_string(status);
    text += "]";
  } else if (status != 0) {
    text += " [status " + std::to_string(status) + "]";
  }
  if (!hint.empty()) text += "; hint: " + hint;
  return text;
}

}  // namespace

Error::Error(std::string what, std::string call, int64_t status, std::string hint)
    : std::runtime_error(compose(what, call, status, hint)),
      message_(std::move(what)),
      call_(std::move(call)),
      hint_(std::move(hint)),
      status_(status) {}

void check_errno(bool ok, const std::string& what, const std::string& call) {
  if (ok) return;
  int err = errno;
  throw Error(what + ": " + std::strerror(err), call, err);
}

}  // namespace nvhcq
