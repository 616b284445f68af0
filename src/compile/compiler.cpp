#include "compile/compiler.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/dynlib.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/version.h"
#include "compile/nvrtc_api.h"
#include "kernels/embedded.h"

namespace nvhcq::compile {
namespace {

namespace fs = std::filesystem;

bool cache_enabled() {
  const char* v = std::getenv("NVHCQ_CACHE");
  return v == nullptr || std::string(v) != "0";
}

// Kernel tuning constants overridden from the environment, e.g.
// NVHCQ_KERNEL_DEFINES="MV_IN_FLIGHT=16 MV_MIN_BLOCKS=3": a way to measure a
// variant on a GPU machine without a rebuild. They enter the cache key as flags.
std::vector<std::string> tuning_defines() {
  std::vector<std::string> out;
  const char* v = std::getenv("NVHCQ_KERNEL_DEFINES");
  if (v == nullptr) return out;
  std::istringstream words(v);
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

// The toolkit include folder that holds cuda_fp16.h, if one is installed.
std::string toolkit_include_dir() {
  for (const auto& dir : cuda_include_dirs()) {
    if (fs::exists(dir + "/cuda_fp16.h")) return dir;
  }
  return {};
}

std::vector<std::string> nvrtc_flags(const CompileOptions& o, const std::string& include_dir) {
  std::vector<std::string> flags = {"--gpu-architecture=" + o.arch, "--std=c++17",
                                    "-default-device"};
  if (o.fast_math) flags.push_back("--use_fast_math");
  if (o.line_info) flags.push_back("--generate-line-info");
  for (const auto& d : o.defines) flags.push_back("-D" + d);
  for (const auto& d : tuning_defines()) flags.push_back("-D" + d);
  if (!include_dir.empty()) flags.push_back("-I" + include_dir);
  flags.insert(flags.end(), o.extra_flags.begin(), o.extra_flags.end());
  return flags;
}

std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_atomically(const fs::path& p, const std::vector<uint8_t>& data) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out) {
      log::debug("could not write the kernel cache entry ", tmp.string());
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

bool looks_like_cubin(const std::vector<uint8_t>& b) {
  return b.size() > 64 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

}  // namespace

std::string cache_dir() {
  if (const char* d = std::getenv("NVHCQ_CACHE_DIR"); d != nullptr && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x) {
    return std::string(x) + "/nvhcq";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h) return std::string(h) + "/.cache/nvhcq";
  return "/tmp/nvhcq-cache";
}

CompiledModule compile(const std::string& source, const std::string& name,
                       const CompileOptions& options) {
  const NvrtcApi& api = nvrtc();
  std::string include_dir = toolkit_include_dir();
  std::vector<std::string> flags = nvrtc_flags(options, include_dir);

  ContentHash key;
  key.add(source).add(name).add(NVHCQ_VERSION).add(static_cast<uint64_t>(api.major * 100 + api.minor));
  for (const auto& f : flags) key.add(f);
  for (const auto& h : kernels::embedded_sources()) key.add(h.name).add(h.text);
  fs::path cached = fs::path(cache_dir()) / (key.hex() + "-" + options.arch + ".cubin");
  if (cache_enabled() && fs::exists(cached)) {
    auto bytes = read_file(cached);
    if (looks_like_cubin(bytes)) return CompiledModule{std::move(bytes), "", true};
    log::warn("ignoring a corrupt kernel cache entry: ", cached.string());
  }

  std::vector<std::string> header_texts, header_names;
  for (const auto& h : kernels::embedded_sources()) {
    if (h.name.size() > 4 && h.name.substr(h.name.size() - 4) == ".cuh") {
      header_texts.emplace_back(h.text);
      header_names.emplace_back(h.name);
    }
  }
  std::vector<const char*> htext, hname, opts;
  for (size_t i = 0; i < header_texts.size(); ++i) {
    htext.push_back(header_texts[i].c_str());
    hname.push_back(header_names[i].c_str());
  }
  for (const auto& f : flags) opts.push_back(f.c_str());

  nvrtcProgram prog = nullptr;
  if (api.nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), static_cast<int>(htext.size()),
                             htext.data(), hname.data()) != kNvrtcSuccess) {
    throw Error("NVRTC could not create a program for " + name, "nvrtcCreateProgram");
  }
  std::string defines;
  for (const auto& f : flags) {
    if (f.starts_with("-D")) defines.append(" ").append(f, 2, std::string::npos);
  }
  log::info("compiling ", name, " for ", options.arch, defines, " (not in the kernel cache)");
  nvrtcResult rc = api.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  api.nvrtcGetProgramLogSize(prog, &log_size);
  std::string compile_log(log_size, '\0');
  if (log_size > 0) api.nvrtcGetProgramLog(prog, compile_log.data());
  while (!compile_log.empty() && (compile_log.back() == '\0' || compile_log.back() == '\n')) {
    compile_log.pop_back();
  }
  if (rc != kNvrtcSuccess) {
    api.nvrtcDestroyProgram(&prog);
    std::string hint;
    if (compile_log.find("cannot open source file") != std::string::npos) {
      hint = include_dir.empty()
                 ? "a CUDA toolkit header is missing: install the toolkit's headers (cuda_fp16.h) "
                   "or set CUDA_HOME"
                 : "an #include names a file that is neither embedded nor in " + include_dir;
    }
    throw Error("NVRTC failed to compile " + name + " for " + options.arch + ":\n" + compile_log,
                "nvrtcCompileProgram", rc, hint);
  }
  size_t size = 0;
  api.nvrtcGetCUBINSize(prog, &size);
  std::vector<uint8_t> cubin(size);
  api.nvrtcGetCUBIN(prog, reinterpret_cast<char*>(cubin.data()));
  api.nvrtcDestroyProgram(&prog);
  if (!looks_like_cubin(cubin)) {
    throw Error("NVRTC produced no CUBIN for " + name + " (is " + options.arch + " a real SM?)");
  }
  if (cache_enabled()) write_atomically(cached, cubin);
  if (!compile_log.empty()) log::debug("NVRTC log for ", name, ":\n", compile_log);
  return CompiledModule{std::move(cubin), compile_log, false};
}

CompiledModule compile_embedded(const std::string& file, const CompileOptions& options) {
  return compile(std::string(kernels::embedded_source(file)), file, options);
}

}  // namespace nvhcq::compile
