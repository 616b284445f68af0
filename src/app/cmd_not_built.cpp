// Commands whose issues have not landed yet: they parse --help like every other
// command and otherwise say plainly that they are not built.

#include <cstdio>

#include "app/commands.h"
#include "base/error.h"

namespace nvhcq::app {
namespace {

int not_built(const char* name, const char* summary, const Args& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::printf("usage: nvhcq %s ...\n%s\n(not built yet)\n", name, summary);
      return 0;
    }
  }
  throw Error(std::string("'nvhcq ") + name + "' is not built yet");
}

}  // namespace

int run_serve(const Args& a) { return not_built("serve", "serve a GGUF model over HTTP", a); }

}  // namespace nvhcq::app
