#pragma once
// Run-time loading of shared libraries (libcuda, libnvrtc, libcublas). nvhcq
// links against none of them: a missing library is an Error naming every place
// that was searched, never a failure to start.

#include <mutex>
#include <string>
#include <vector>

#include "base/error.h"

namespace nvhcq {

class DynLib {
 public:
  // Opens the first library that loads: each name is tried in each directory of
  // `dirs` (a name may be a glob such as "libnvrtc.so.*"), then by bare name
  // through the dynamic loader's own path. `what` names the library in errors.
  static DynLib open(const std::string& what, const std::vector<std::string>& names,
                     const std::vector<std::string>& dirs);

  DynLib() = default;
  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }

  // Looks a symbol up; throws Error naming the library when a required one is absent.
  void* symbol(const char* name, bool required = true) const;
  template <typename Fn>
  void bind(Fn*& out, const char* name, bool required = true) const {
    out = reinterpret_cast<Fn*>(symbol(name, required));
  }

 private:
  // Libraries stay loaded for the life of the process: libcuda and NVRTC do not
  // support being unloaded and reloaded.
  void* handle_ = nullptr;
  std::string path_, what_;
};

// An API table bound by `Load` (from a DynLib), loaded once per process: get()
// returns it, or throws the first attempt's Error again; available() says
// whether it loaded.
template <typename Api, Api (*Load)()>
struct LoadedOnce {
  static const Api& get() {
    static std::once_flag once;
    static Api api;
    static std::string failure;
    std::call_once(once, [] {
      try {
        api = Load();
      } catch (const Error& e) {
        failure = e.what();
      }
    });
    if (!failure.empty()) throw Error(failure);
    return api;
  }
  static bool available() {
    try {
      get();
      return true;
    } catch (const Error&) {
      return false;
    }
  }
};

// Directories where the CUDA toolkit's libraries live, most specific first:
// $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64, /usr/local/cuda-*/lib64
// (newest version first), and the driver's folders (/usr/local/nvidia/lib64, ...).
std::vector<std::string> cuda_library_dirs();
// Include folders holding the toolkit's headers (cuda_fp16.h, ...), same order.
std::vector<std::string> cuda_include_dirs();

}  // namespace nvhcq
