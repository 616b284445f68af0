#include "base/dynlib.h"

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "base/log.h"

namespace nvhcq {
namespace {

std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

// Orders /usr/local/cuda-13.0 before /usr/local/cuda-12.6 before /usr/local/cuda-9.2.
bool newer_version_first(const std::string& a, const std::string& b) {
  auto key = [](const std::string& s) {
    std::vector<int> parts;
    int cur = -1;
    for (char c : s) {
      if (c >= '0' && c <= '9') {
        cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      } else if (cur >= 0) {
        parts.push_back(cur);
        cur = -1;
      }
    }
    if (cur >= 0) parts.push_back(cur);
    return parts;
  };
  return key(a) > key(b);
}

std::vector<std::string> cuda_roots() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') roots.emplace_back(v);
  }
  roots.emplace_back("/usr/local/cuda");
  auto versioned = glob_paths("/usr/local/cuda-*");
  std::sort(versioned.begin(), versioned.end(), newer_version_first);
  roots.insert(roots.end(), versioned.begin(), versioned.end());
  std::vector<std::string> unique;
  for (const auto& r : roots) {
    if (std::find(unique.begin(), unique.end(), r) == unique.end()) unique.push_back(r);
  }
  return unique;
}

}  // namespace

std::vector<std::string> cuda_library_dirs() {
  std::vector<std::string> dirs;
  for (const auto& root : cuda_roots()) {
    dirs.push_back(root + "/lib64");
    dirs.push_back(root + "/targets/x86_64-linux/lib");
    dirs.push_back(root + "/targets/sbsa-linux/lib");
  }
  for (const char* d : {"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib",
                        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                        "/usr/lib/aarch64-linux-gnu/nvidia", "/usr/lib64"}) {
    dirs.emplace_back(d);
  }
  return dirs;
}

std::vector<std::string> cuda_include_dirs() {
  std::vector<std::string> dirs;
  for (const auto& root : cuda_roots()) {
    dirs.push_back(root + "/include");
    dirs.push_back(root + "/targets/x86_64-linux/include");
    dirs.push_back(root + "/targets/sbsa-linux/include");
  }
  return dirs;
}

DynLib DynLib::open(const std::string& what, const std::vector<std::string>& names,
                    const std::vector<std::string>& dirs) {
  std::string searched;
  std::string last_error;
  auto try_path = [&](const std::string& path) -> void* {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = ::dlerror();
      if (e != nullptr) last_error = e;
    }
    return h;
  };
  DynLib lib;
  lib.what_ = what;
  for (const auto& dir : dirs) {
    if (!std::filesystem::is_directory(dir)) continue;
    searched += (searched.empty() ? "" : ", ") + dir;
    for (const auto& name : names) {
      auto candidates = glob_paths(dir + "/" + name);
      std::sort(candidates.begin(), candidates.end(), newer_version_first);
      for (const auto& path : candidates) {
        if (void* h = try_path(path)) {
          lib.handle_ = h;
          lib.path_ = path;
          log::debug("loaded ", what, " from ", path);
          return lib;
        }
      }
    }
  }
  for (const auto& name : names) {
    if (name.find('*') != std::string::npos) continue;
    if (void* h = try_path(name)) {
      lib.handle_ = h;
      char resolved[4096] = {0};
      lib.path_ = ::dlinfo(h, RTLD_DI_ORIGIN, resolved) == 0 ? std::string(resolved) + "/" + name
                                                              : name;
      log::debug("loaded ", what, " from the loader path: ", lib.path_);
      return lib;
    }
  }
  std::string tried;
  for (const auto& n : names) tried += (tried.empty() ? "" : ", ") + n;
  throw Error(what + " not found (tried " + tried + " in " +
                  (searched.empty() ? std::string("no existing folder") : searched) +
                  ", then the dynamic loader path)",
              "dlopen", 0,
              last_error.empty() ? "install it or set CUDA_HOME / LD_LIBRARY_PATH"
                                 : "last loader error: " + last_error);
}

void* DynLib::symbol(const char* name, bool required) const {
  if (handle_ == nullptr) throw Error(what_ + " is not loaded", std::string("dlsym ") + name);
  void* p = ::dlsym(handle_, name);
  if (p == nullptr && required) {
    throw Error(what_ + " (" + path_ + ") lacks the symbol " + name, "dlsym", 0,
                "the library is too old for nvhcq");
  }
  return p;
}

}  // namespace nvhcq
