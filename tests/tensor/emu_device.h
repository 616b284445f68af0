#pragma once
// "emu": a tensor device that runs the GPU backend's kernels on the host, so the
// scheduler, the code generator, the library kernels and the Jit are tested on
// machines without a GPU. It is GpuBackend itself over an emulated Accelerator:
//
//   * memory is host memory (a buffer's "GPU address" is its host address);
//   * a kernel's CUDA C (generated or embedded) is compiled as C++ by the host
//     compiler ($CXX or c++) with a small shim for the CUDA keywords, into a
//     shared object cached under $TMPDIR/nvhcq-emu-<uid>/;
//   * a launch runs every block in turn; kernels without barriers or shuffles
//     run their threads one after another, the others get one OS thread per CUDA
//     thread with std::barrier for __syncthreads and warp shuffles;
//   * graphs record launches and replay them.
//
// What it cannot check: PTX-only paths (#ifdef __CUDA_ARCH__ in
// tensor_common.cuh have portable twins), real-GPU timing, memory ordering
// across blocks. Header-only so test_tensor and test_gpu can both use it.

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "base/hash.h"
#include "gpu/accelerator.h"
#include "kernels/embedded.h"
#include "tensor/backend.h"
#include "tensor/gpu/gpu_backend.h"
#include "tensor/gpu/kernel_loader.h"

namespace nvhcq::emu {

// ---- the C interface between the emulator and a compiled kernel -----------------

struct EmuDim3 {
  unsigned x, y, z;
};
struct EmuThread;
struct EmuBlock {
  EmuDim3 block_idx, block_dim, grid_dim;
  void (*sync_block)(EmuThread*);
  void (*sync_warp)(EmuThread*);
  unsigned long long* slots;  // one exchange slot per thread (shuffles)
  void* owner;
};
struct EmuThread {
  EmuDim3 thread_idx;
  unsigned linear;
  EmuBlock* block;
};

inline const char* shim_source() {
  return R"SHIM(// CUDA keywords for kernels compiled as host C++ by the nvhcq emulator.
#pragma once
#include <math.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <type_traits>
#include <utility>
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
struct EmuDim3 { unsigned x, y, z; };
struct EmuThread;
struct EmuBlock { EmuDim3 block_idx, block_dim, grid_dim; void (*sync_block)(EmuThread*); void (*sync_warp)(EmuThread*); unsigned long long* slots; void* owner; };
struct EmuThread { EmuDim3 thread_idx; unsigned linear; EmuBlock* block; };
static thread_local EmuThread* nvhcq_emu_self;
#define threadIdx (nvhcq_emu_self->thread_idx)
#define blockIdx (nvhcq_emu_self->block->block_idx)
#define blockDim (nvhcq_emu_self->block->block_dim)
#define gridDim (nvhcq_emu_self->block->grid_dim)
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
static inline void __syncthreads() { nvhcq_emu_self->block->sync_block(nvhcq_emu_self); }
template <typename T>
static T nvhcq_emu_exchange(T v, unsigned partner_lane) {
  EmuThread* t = nvhcq_emu_self;
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T));
  t->block->slots[t->linear] = bits;
  t->block->sync_warp(t);
  bits = t->block->slots[(t->linear & ~31u) | (partner_lane & 31u)];
  t->block->sync_warp(t);
  T r;
  memcpy(&r, &bits, sizeof(T));
  return r;
}
template <typename T> static T __shfl_xor_sync(unsigned, T v, int mask, int = 32) { return nvhcq_emu_exchange(v, (nvhcq_emu_self->linear & 31u) ^ (unsigned)mask); }
template <typename T> static T __shfl_down_sync(unsigned, T v, unsigned d, int = 32) { unsigned l = nvhcq_emu_self->linear & 31u; return nvhcq_emu_exchange(v, l + d < 32 ? l + d : l); }
template <typename T> static T __shfl_sync(unsigned, T v, int src, int = 32) { return nvhcq_emu_exchange(v, (unsigned)src); }
template <typename T> static T __ldg(const T* p) { return *p; }
template <typename... A, size_t... I>
static void nvhcq_emu_call(void (*f)(A...), void** argv, std::index_sequence<I...>) {
  f(*reinterpret_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(argv[I])...);
}
template <typename... A>
static int nvhcq_emu_sizes(void (*)(A...), unsigned* out) {
  unsigned s[] = {0u, (unsigned)sizeof(std::remove_cv_t<std::remove_reference_t<A>>)...};
  for (size_t i = 0; i < sizeof...(A); ++i) out[i] = s[i + 1];
  return (int)sizeof...(A);
}
)SHIM";
}

// ---- compiling kernels as host code -----------------------------------------------

inline std::string emu_cache_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/nvhcq-emu-" + std::to_string(::getuid());
}

inline std::string host_compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

// True when the host compiler runs (the emulator needs it).
inline bool emu_available() {
  static const bool ok = [] {
    const std::string cmd = host_compiler() + " --version > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }();
  return ok;
}

class EmuKernel final : public gpu::Kernel {
 public:
  using Run = void (*)(EmuThread*, void**);
  EmuKernel(std::string name, Run run, bool cooperative, std::vector<unsigned> sizes)
      : name_(std::move(name)), run_(run), cooperative_(cooperative), sizes_(std::move(sizes)) {}
  const std::string& name() const override { return name_; }
  uint32_t max_threads_per_block() const override { return 1024; }
  Run run() const { return run_; }
  bool cooperative() const { return cooperative_; }
  const std::vector<unsigned>& sizes() const { return sizes_; }

 private:
  std::string name_;
  Run run_;
  bool cooperative_;
  std::vector<unsigned> sizes_;
};

// Compiles one entry point of a source into a shared object (cached on disk).
inline std::shared_ptr<EmuKernel> compile_emu_kernel(const std::string& source,
                                                     const std::string& entry) {
  namespace fs = std::filesystem;
  ContentHash h;
  h.add(shim_source()).add(source).add(entry).add(host_compiler());
  for (const auto& e : kernels::embedded_sources()) h.add(e.name).add(e.text);
  const std::string dir = emu_cache_dir();
  const std::string key = h.hex();
  const std::string so = dir + "/" + entry + "-" + key + ".so";
  if (!fs::exists(so)) {
    const std::string inc = dir + "/include-" + key;
    fs::create_directories(inc);
    std::ofstream(inc + "/emu_shim.h") << shim_source();
    for (const auto& e : kernels::embedded_sources())
      std::ofstream(inc + "/" + std::string(e.name)) << e.text;
    const std::string cu = inc + "/kernel.cpp";
    {
      std::ofstream out(cu);
      out << source << "\n\n// emulator entry points\n"
          << "template <typename... A> static void nvhcq_emu_dispatch(void (*f)(A...), void** "
             "argv) {\n"
          << "  nvhcq_emu_call(f, argv, std::index_sequence_for<A...>());\n}\n"
          << "extern \"C\" void nvhcq_emu_run(EmuThread* t, void** argv) {\n"
          << "  nvhcq_emu_self = t;\n  nvhcq_emu_dispatch(&" << entry << ", argv);\n}\n"
          << "extern \"C\" int nvhcq_emu_arg_sizes(unsigned* out) { return nvhcq_emu_sizes(&"
          << entry << ", out); }\n";
    }
    const std::string tmp = so + ".tmp" + std::to_string(::getpid());
    const std::string log = inc + "/compile.log";
    const std::string cmd =
        host_compiler() +
        " -std=c++17 -O1 -fno-strict-aliasing -fPIC -shared -w -DNVHCQ_EMU -include " + inc +
        "/emu_shim.h -I" + inc + " -x c++ " + cu + " -o " + tmp + " > " + log + " 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      std::string msg = text.str();
      if (msg.size() > 4000) msg = msg.substr(0, 4000) + "...";
      throw Error("emulator: compiling kernel " + entry + " as host C++ failed (source in " + cu +
                  "):\n" + msg);
    }
    fs::rename(tmp, so);
  }
  void* handle = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw Error(std::string("emulator: dlopen failed: ") + ::dlerror());
  auto run = reinterpret_cast<EmuKernel::Run>(::dlsym(handle, "nvhcq_emu_run"));
  auto sizes_fn = reinterpret_cast<int (*)(unsigned*)>(::dlsym(handle, "nvhcq_emu_arg_sizes"));
  if (run == nullptr || sizes_fn == nullptr) throw Error("emulator: entry points missing in " + so);
  unsigned sizes[64];
  const int n = sizes_fn(sizes);
  const bool cooperative =
      source.find("__syncthreads") != std::string::npos || source.find("shfl") != std::string::npos;
  return std::make_shared<EmuKernel>(entry, run, cooperative,
                                     std::vector<unsigned>(sizes, sizes + n));
}

// ---- running kernels ------------------------------------------------------------------

// One block's synchronization: a barrier over all its threads and one per warp.
struct EmuBlockSync {
  explicit EmuBlockSync(unsigned threads) : all(threads) {
    for (unsigned w = 0; w * 32 < threads; ++w)
      warps.push_back(std::make_unique<std::barrier<>>(std::min(32u, threads - w * 32)));
  }
  std::barrier<> all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
};

inline void emu_sync_block(EmuThread* t) {
  static_cast<EmuBlockSync*>(t->block->owner)->all.arrive_and_wait();
}
inline void emu_sync_warp(EmuThread* t) {
  static_cast<EmuBlockSync*>(t->block->owner)->warps[t->linear / 32]->arrive_and_wait();
}

inline void emu_launch(const EmuKernel& k, const gpu::KernelArgs& args, const gpu::LaunchDims& d) {
  if (args.count() != k.sizes().size()) {
    throw Error("emulator: kernel " + k.name() + " takes " + std::to_string(k.sizes().size()) +
                " arguments, launched with " + std::to_string(args.count()));
  }
  struct alignas(16) Slot {
    unsigned char b[sizeof(gpu::KernelArgs::Arg::bytes)];
  };
  std::vector<Slot> storage(args.count());
  std::vector<void*> argv(args.count());
  for (size_t i = 0; i < args.count(); ++i) {
    const auto& a = args.args()[i];
    if (a.size != k.sizes()[i]) {
      throw Error("emulator: argument " + std::to_string(i) + " of kernel " + k.name() + " has " +
                  std::to_string(a.size) + " bytes, the kernel expects " +
                  std::to_string(k.sizes()[i]));
    }
    std::memcpy(storage[i].b, a.bytes, a.size);
    argv[i] = storage[i].b;
  }
  const unsigned threads = d.block[0] * d.block[1] * d.block[2];
  if (threads == 0 || threads > 1024) throw Error("emulator: bad block size for " + k.name());
  std::vector<unsigned long long> slots(threads);
  for (unsigned bz = 0; bz < d.grid[2]; ++bz)
    for (unsigned by = 0; by < d.grid[1]; ++by)
      for (unsigned bx = 0; bx < d.grid[0]; ++bx) {
        EmuBlockSync sync(threads);
        EmuBlock blk{{bx, by, bz},
                     {d.block[0], d.block[1], d.block[2]},
                     {d.grid[0], d.grid[1], d.grid[2]},
                     emu_sync_block,
                     emu_sync_warp,
                     slots.data(),
                     &sync};
        auto thread_of = [&](unsigned linear) {
          return EmuThread{{linear % d.block[0], (linear / d.block[0]) % d.block[1],
                            linear / (d.block[0] * d.block[1])},
                           linear,
                           &blk};
        };
        if (!k.cooperative()) {
          for (unsigned t = 0; t < threads; ++t) {
            EmuThread th = thread_of(t);
            k.run()(&th, argv.data());
          }
          continue;
        }
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            EmuThread th = thread_of(t);
            k.run()(&th, argv.data());
            sync.warps[t / 32]->arrive_and_drop();
            sync.all.arrive_and_drop();
          });
        }
        for (auto& th : pool) th.join();
      }
}

// ---- the Accelerator -------------------------------------------------------------------

class EmuMemory final : public gpu::DeviceMemory {
 public:
  explicit EmuMemory(size_t bytes) {
    const size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    ptr_ = std::aligned_alloc(256, rounded);
    if (ptr_ == nullptr) throw OutOfMemoryError("emulator: out of host memory");
    va_ = reinterpret_cast<uint64_t>(ptr_);
    size_ = bytes;
  }
  ~EmuMemory() override { std::free(ptr_); }
  void* ptr() const { return ptr_; }

 private:
  void* ptr_;
};

class EmuGraph final : public gpu::Graph {
 public:
  struct Op {
    const EmuKernel* kernel;
    gpu::KernelArgs args;
    gpu::LaunchDims dims;
  };
  std::vector<Op> ops;
  size_t launches() const override { return ops.size(); }
  void set_args(size_t i, const gpu::KernelArgs& args) override { ops.at(i).args = args; }
};

class EmuAccelerator : public gpu::Accelerator {
 public:
  std::string backend() const override { return "emu"; }
  std::string device_name() const override { return "host emulator"; }
  // Reports a Hopper, so the backend plans what it plans there (the tensor-core
  // GEMM included: EmuLoader runs a reference kernel with the same interface).
  std::string arch() const override { return "sm_90"; }
  uint32_t sm_count() const override { return 4; }
  uint64_t memory_bytes() const override { return uint64_t{1} << 34; }
  std::unique_ptr<gpu::DeviceMemory> alloc(size_t bytes) override {
    allocated_ += bytes;
    return std::make_unique<EmuMemory>(bytes);
  }
  std::unique_ptr<gpu::DeviceMemory> alloc_host(size_t bytes, void** cpu) override {
    auto m = std::make_unique<EmuMemory>(bytes);
    *cpu = m->ptr();
    return m;
  }
  void upload(const gpu::DeviceMemory& dst, size_t off, const void* src, size_t bytes) override {
    std::memcpy(reinterpret_cast<char*>(dst.va()) + off, src, bytes);
  }
  void download(void* dst, const gpu::DeviceMemory& src, size_t off, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const char*>(src.va()) + off, bytes);
  }
  std::unique_ptr<gpu::Kernel> load(const std::vector<uint8_t>&, const std::string& name) override {
    throw Error("emulator: kernels are loaded from source, not CUBIN (" + name + ")");
  }
  void launch(const gpu::Kernel& kernel, const gpu::KernelArgs& args,
              const gpu::LaunchDims& dims) override {
    const auto& k = static_cast<const EmuKernel&>(kernel);
    ++launches_;
    if (capture_) {
      capture_->ops.push_back({&k, args, dims});
      return;
    }
    emu_launch(k, args, dims);
  }
  void copy(uint64_t dst, uint64_t src, size_t bytes) override {
    if (capture_) throw Error("emulator: copies are not captured");
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  }
  void synchronize() override {}
  gpu::TimePoint record_time() override {
    times_.push_back(std::chrono::steady_clock::now());
    return gpu::TimePoint{times_.size() - 1};
  }
  double elapsed_ms(gpu::TimePoint a, gpu::TimePoint b) override {
    return std::chrono::duration<double, std::milli>(times_.at(b.handle) - times_.at(a.handle))
        .count();
  }
  void begin_capture() override {
    if (capture_) throw Error("a graph capture is already running");
    capture_ = std::make_unique<EmuGraph>();
  }
  std::unique_ptr<gpu::Graph> end_capture() override {
    if (!capture_) throw Error("end_capture without begin_capture");
    return std::move(capture_);
  }
  void replay(gpu::Graph& graph) override {
    ++replays_;
    for (const auto& op : static_cast<EmuGraph&>(graph).ops)
      emu_launch(*op.kernel, op.args, op.dims);
  }
  uint64_t allocated_bytes() const override { return allocated_; }

  uint64_t launches() const { return launches_; }
  uint64_t replays() const { return replays_; }

 private:
  std::unique_ptr<EmuGraph> capture_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  uint64_t allocated_ = 0, launches_ = 0, replays_ = 0;
};

// The tensor-core GEMM kernels (gemm_mma.cu: inline PTX) cannot run on the host;
// in their place the emulator runs this reference with the same interface
// (C, A, B, M, N, K; row-major f16/bf16, f32 sums rounded once), so the planning
// and arguments of the dense-GEMM path are still checked.
inline std::string reference_gemm_source(const std::string& entry) {
  const bool bf16 = entry.find("bf16") != std::string::npos;
  const std::string load = bf16 ? "nvt_bf2f" : "nvt_h2f", store = bf16 ? "nvt_f2bf" : "nvt_f2h";
  return "#include \"tensor_common.cuh\"\n"
         "extern \"C\" __global__ void " +
         entry +
         "(unsigned short* C, const unsigned short* A, const unsigned short* B, int M, int N, int "
         "K) {\n"
         "  const long long total = (long long)M * N;\n"
         "  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += "
         "(long long)gridDim.x * blockDim.x) {\n"
         "    const long long i = e / N, j = e % N;\n"
         "    float acc = 0.0f;\n"
         "    for (int k = 0; k < K; ++k) acc += " +
         load + "(A[i * K + k]) * " + load +
         "(B[(long long)k * N + j]);\n"
         "    C[e] = " +
         store +
         "(acc);\n"
         "  }\n"
         "}\n";
}

// Compiles each (source, entry) once per process, the missing ones of a batch in parallel.
class EmuLoader final : public tensor::KernelLoader {
 public:
  std::vector<std::shared_ptr<gpu::Kernel>> load_all(
      const std::vector<const tensor::LaunchSpec*>& specs) override {
    std::vector<std::string> keys;
    std::vector<size_t> missing;
    for (size_t i = 0; i < specs.size(); ++i) {
      keys.push_back(ContentHash().add(specs[i]->source).add(specs[i]->entry).hex());
      bool seen = kernels_.count(keys[i]) != 0;
      for (size_t m : missing) seen = seen || keys[m] == keys[i];
      if (!seen) missing.push_back(i);
    }
    std::vector<std::shared_ptr<EmuKernel>> built(missing.size());
    std::vector<std::exception_ptr> errors(missing.size());
    std::vector<std::thread> workers;
    std::atomic<size_t> next{0};
    const size_t n_workers =
        std::min<size_t>(missing.size(), std::max(1u, std::thread::hardware_concurrency()));
    for (size_t w = 0; w < n_workers; ++w) {
      workers.emplace_back([&] {
        for (size_t j = next++; j < missing.size(); j = next++) {
          try {
            const tensor::LaunchSpec& spec = *specs[missing[j]];
            tensor::dump_kernel_source(spec);
            const std::string source =
                spec.file == "gemm_mma.cu" ? reference_gemm_source(spec.entry) : spec.source;
            built[j] = compile_emu_kernel(source, spec.entry);
          } catch (...) {
            errors[j] = std::current_exception();
          }
        }
      });
    }
    for (auto& w : workers) w.join();
    for (size_t j = 0; j < missing.size(); ++j) {
      if (errors[j]) std::rethrow_exception(errors[j]);
      kernels_[keys[missing[j]]] = built[j];
      ++compiled_;
    }
    std::vector<std::shared_ptr<gpu::Kernel>> out;
    for (const auto& k : keys) out.push_back(kernels_.at(k));
    return out;
  }
  size_t compiled() const override { return compiled_; }

 private:
  std::unordered_map<std::string, std::shared_ptr<EmuKernel>> kernels_;
  size_t compiled_ = 0;
};

// Registers the "emu" tensor device (idempotent).
inline void register_emu_device(const std::string& name = "emu") {
  static std::once_flag once;
  std::call_once(once, [name] {
    tensor::register_backend(name, [name] {
      auto acc = std::make_unique<EmuAccelerator>();
      return std::make_unique<tensor::GpuBackend>(name, std::move(acc),
                                                  std::make_unique<EmuLoader>());
    });
  });
}

}  // namespace nvhcq::emu
