#include "tensor/gpu/kernel_loader.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "base/error.h"
#include "base/hash.h"
#include "compile/compiler.h"
#include "kernels/embedded.h"

namespace nvhcq::tensor {
namespace {

std::string source_key(const LaunchSpec& s) {
  return ContentHash().add(s.source).add(s.file).hex();
}

class NvrtcLoader final : public KernelLoader {
 public:
  NvrtcLoader(gpu::Accelerator& acc, LoaderLimits limits) : acc_(acc), limits_(limits) {
    options_.arch = acc.arch();
    generated_options_ = options_;
    // Each op of a fused chain rounds as the CPU backend rounds it, one op at a
    // time: no contraction of a product and a sum into one FMA. (Library
    // kernels, matmuls above all, keep their FMAs.)
    generated_options_.extra_flags.push_back("--fmad=false");
  }

  std::vector<std::shared_ptr<gpu::Kernel>> load_all(
      const std::vector<const LaunchSpec*>& specs) override {
    std::lock_guard<std::mutex> lock(mutex_);
    // Compile the sources not seen yet, several at a time.
    std::vector<std::pair<std::string, const LaunchSpec*>> missing;
    for (const LaunchSpec* s : specs) {
      const std::string key = source_key(*s);
      if (auto c = cubins_.find(key); c != cubins_.end()) {
        c->second.last_use = ++clock_;
        continue;
      }
      if (std::none_of(missing.begin(), missing.end(), [&](auto& m) { return m.first == key; })) {
        missing.emplace_back(key, s);
      }
    }
    if (missing.size() == 1) {
      cubins_[missing[0].first] = {compile_one(*missing[0].second), ++clock_};
    } else if (!missing.empty()) {
      const size_t workers = std::max<size_t>(
          1, std::min<size_t>(missing.size(), std::thread::hardware_concurrency()));
      std::vector<std::vector<uint8_t>> results(missing.size());
      std::vector<std::exception_ptr> errors(missing.size());
      std::vector<std::thread> pool;
      std::atomic<size_t> next{0};
      for (size_t w = 0; w < workers; ++w) {
        pool.emplace_back([&] {
          for (size_t i = next++; i < missing.size(); i = next++) {
            try {
              results[i] = compile_one(*missing[i].second);
            } catch (...) {
              errors[i] = std::current_exception();
            }
          }
        });
      }
      for (auto& t : pool) t.join();
      for (size_t i = 0; i < missing.size(); ++i) {
        if (errors[i]) std::rethrow_exception(errors[i]);
        cubins_[missing[i].first] = {std::move(results[i]), ++clock_};
      }
    }
    std::vector<std::shared_ptr<gpu::Kernel>> out;
    for (const LaunchSpec* s : specs) {
      const std::string key = source_key(*s);
      const std::string kkey = key + "/" + s->entry;
      auto it = kernels_.find(kkey);
      if (it == kernels_.end()) {
        std::shared_ptr<gpu::Kernel> k;
        try {
          k = acc_.load(cubins_.at(key).bytes, s->entry);
        } catch (const Error& e) {
          throw Error("loading kernel " + s->entry + " (" + s->what + ") on " + acc_.backend() +
                      " failed: " + e.what());
        }
        it = kernels_.emplace(kkey, Loaded{std::move(k), 0}).first;
      }
      it->second.last_use = ++clock_;
      out.push_back(it->second.kernel);
    }
    evict_beyond_bounds();
    return out;
  }

  size_t compiled() const override { return compiled_; }

 private:
  std::vector<uint8_t> compile_one(const LaunchSpec& s) {
    dump_kernel_source(s);
    try {
      bool library = false;
      for (const auto& e : kernels::embedded_sources()) library = library || e.name == s.file;
      auto m = compile::compile(s.source, s.file, library ? options_ : generated_options_);
      if (!m.from_cache) ++compiled_;
      return std::move(m.cubin);
    } catch (const Error& e) {
      throw Error("compiling kernel " + s.entry + " (" + s.what + ") failed: " + e.what(), e.call(),
                  e.status(), "set NVHCQ_DUMP_KERNELS=<dir> to keep the generated source");
    }
  }

  // Above a bound, the least recently used quarter goes. Kernels the caller
  // holds (this batch's, captured graphs') live on in their shared_ptrs.
  void evict_beyond_bounds() {
    if (cubins_.size() > limits_.cubins) {
      take_oldest(cubins_, cubins_.size() - limits_.cubins * 3 / 4);
    }
    if (kernels_.size() > limits_.loaded_kernels) {
      auto dropped = take_oldest(kernels_, kernels_.size() - limits_.loaded_kernels * 3 / 4);
      // A dropped kernel may still be running from an earlier launch: its code
      // memory may go only after the GPU is done. (No capture is open here:
      // captures launch kernels loaded before them.)
      acc_.synchronize();
      dropped.clear();
    }
  }

  // Removes the `count` least recently used entries of `map` and returns them.
  template <typename Map>
  static std::vector<typename Map::mapped_type> take_oldest(Map& map, size_t count) {
    std::vector<std::pair<uint64_t, std::string>> by_age;
    by_age.reserve(map.size());
    for (const auto& [key, entry] : map) by_age.emplace_back(entry.last_use, key);
    std::nth_element(by_age.begin(), by_age.begin() + static_cast<std::ptrdiff_t>(count),
                     by_age.end());
    std::vector<typename Map::mapped_type> taken;
    for (size_t i = 0; i < count; ++i) {
      auto it = map.find(by_age[i].second);
      taken.push_back(std::move(it->second));
      map.erase(it);
    }
    return taken;
  }

  struct Cubin {
    std::vector<uint8_t> bytes;
    uint64_t last_use = 0;
  };
  struct Loaded {
    std::shared_ptr<gpu::Kernel> kernel;
    uint64_t last_use = 0;
  };

  gpu::Accelerator& acc_;
  LoaderLimits limits_;
  compile::CompileOptions options_, generated_options_;
  std::mutex mutex_;
  uint64_t clock_ = 0;  // orders uses, for eviction
  std::unordered_map<std::string, Cubin> cubins_;
  std::unordered_map<std::string, Loaded> kernels_;
  std::atomic<size_t> compiled_{0};
};

}  // namespace

std::unique_ptr<KernelLoader> make_nvrtc_loader(gpu::Accelerator& acc, LoaderLimits limits) {
  return std::make_unique<NvrtcLoader>(acc, limits);
}

void dump_kernel_source(const LaunchSpec& spec) {
  const char* dir = std::getenv("NVHCQ_DUMP_KERNELS");
  if (dir == nullptr || *dir == '\0') return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path =
      std::string(dir) + "/" + spec.entry + "-" + source_key(spec).substr(0, 8) + ".cu";
  std::ofstream(path) << spec.source;
}

}  // namespace nvhcq::tensor
