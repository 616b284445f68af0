#include "model_test_models.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "cpu/thread_pool.h"
#include "llm/synth/model_synthesizer.h"

namespace nvhcq::llm::model_test {
namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "nvhcq-model-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

TempDir& temp_dir() {
  static TempDir dir;
  return dir;
}

}  // namespace

std::string temp_path(const std::string& name) {
  return (temp_dir().path / name).string();
}

const std::string& tiny_model(const std::string& arch, LlamaFtype ftype, bool llama3_rope) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, LlamaFtype, bool>, std::string> made;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(arch, ftype, llama3_rope);
  auto it = made.find(key);
  if (it != made.end()) return it->second;
  SynthOptions o;
  o.arch = arch;
  o.preset = *find_synth_preset("tiny");
  if (llama3_rope) {
    o.preset.llama3_factor = 8.0f;
    o.preset.llama3_original_context = 8192;
  }
  o.ftype = ftype;
  o.seed = 7;
  o.output_path = temp_path("tiny-" + arch + "-" + std::string(llama_ftype_name(ftype)) +
                            (llama3_rope ? "-llama3" : "") + ".gguf");
  cpu::ThreadPool pool(2);
  synthesize_model(o, pool);
  return made.emplace(key, o.output_path).first->second;
}

}  // namespace nvhcq::llm::model_test
