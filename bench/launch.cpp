// Launch latency: one empty kernel launched and waited for (round trip), and
// long runs of back-to-back launches, through nvhcq's direct path ("nv") and the
// CUDA driver API ("cuda"), on the same CUBIN, in one process. The backends
// alternate in blocks, so GPU clock changes affect both alike; samples right after
// a switch are dropped, because the GPU then switches contexts (~150 µs each:
// alternating sample by sample would time that switch, not a launch).
// Last, a graph of --graph launches recorded and replayed through the
// Accelerator interface on both backends (an nvhcq graph: one submission of
// chained QMDs; a CUDA graph).
//   bench_launch [--iters 2000] [--back-to-back 10000] [--json out.json]

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "base/args.h"
#include "base/error.h"
#include "compile/compiler.h"
#include "cuda/cuda_accelerator.h"
#include "cuda/cuda_api.h"
#include "gpu/device.h"
#include "gpu/program.h"
#include "gpu/queue.h"
#include "support/report.h"

namespace nvhcq::bench {
namespace {

// Empty-kernel launches through nvhcq's direct path.
class NvLauncher {
 public:
  explicit NvLauncher(const std::vector<uint8_t>& cubin)
      : dev_(gpu::Device::open(0)), empty_(*dev_, cubin, "empty_kernel"), signal_(dev_->new_signal(0)) {}

  double round_trip_us() {
    double t0 = now_us();
    gpu::ComputeQueue().exec(empty_, gpu::KernelArgs(), gpu::LaunchDims{}).signal(signal_, ++value_).submit(*dev_);
    dev_->wait(signal_, value_);
    return now_us() - t0;
  }
  // n launches chained in one submission.
  double chained_us_per_kernel(int n) {
    gpu::ComputeQueue q;
    for (int i = 0; i < n; ++i) q.exec(empty_, gpu::KernelArgs(), gpu::LaunchDims{});
    q.signal(signal_, ++value_);
    double t0 = now_us();
    q.submit(*dev_);
    dev_->wait(signal_, value_);
    return (now_us() - t0) / n;
  }
  // n launches, one submission each.
  double submissions_us_per_kernel(int n) {
    double t0 = now_us();
    for (int i = 0; i < n; ++i) gpu::ComputeQueue().exec(empty_, gpu::KernelArgs(), gpu::LaunchDims{}).submit(*dev_);
    dev_->synchronize();
    return (now_us() - t0) / n;
  }
  std::string name() const { return dev_->info().name + " (" + dev_->info().arch() + ")"; }
  std::string driver() const { return dev_->info().driver_version; }

 private:
  std::unique_ptr<gpu::Device> dev_;
  gpu::Program empty_;
  gpu::Signal signal_;
  uint64_t value_ = 0;
};

// The same launches through the CUDA driver API.
class CudaLauncher {
 public:
  explicit CudaLauncher(const std::vector<uint8_t>& cubin) : api_(nvhcq::cuda::cuda()) {
    using nvhcq::cuda::check;
    nvhcq::cuda::CUdevice dev;
    check(api_.cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(api_.cuDevicePrimaryCtxRetain(&ctx_, dev), "cuDevicePrimaryCtxRetain");
    check(api_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    check(api_.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
    check(api_.cuModuleGetFunction(&fn_, module_, "empty_kernel"), "cuModuleGetFunction");
    check(api_.cuStreamCreate(&stream_, nvhcq::cuda::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~CudaLauncher() {
    if (graph_exec_ != nullptr) api_.cuGraphExecDestroy(graph_exec_);
    if (graph_ != nullptr) api_.cuGraphDestroy(graph_);
    api_.cuStreamDestroy(stream_);
    api_.cuModuleUnload(module_);
  }
  void launch() {
    nvhcq::cuda::check(api_.cuLaunchKernel(fn_, 1, 1, 1, 1, 1, 1, 0, stream_, nullptr, nullptr),
                       "cuLaunchKernel");
  }
  void sync() { nvhcq::cuda::check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize"); }
  double round_trip_us() {
    api_.cuCtxSetCurrent(ctx_);
    double t0 = now_us();
    launch();
    sync();
    return now_us() - t0;
  }
  double back_to_back_us_per_kernel(int n) {
    api_.cuCtxSetCurrent(ctx_);
    double t0 = now_us();
    for (int i = 0; i < n; ++i) launch();
    sync();
    return (now_us() - t0) / n;
  }
  double graph_us_per_kernel(int n) {
    using nvhcq::cuda::check;
    api_.cuCtxSetCurrent(ctx_);
    if (graph_exec_ == nullptr) {
      check(api_.cuStreamBeginCapture(stream_, nvhcq::cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "cuStreamBeginCapture");
      for (int i = 0; i < n; ++i) launch();
      check(api_.cuStreamEndCapture(stream_, &graph_), "cuStreamEndCapture");
      check(api_.cuGraphInstantiateWithFlags(&graph_exec_, graph_, 0), "cuGraphInstantiateWithFlags");
      check(api_.cuGraphLaunch(graph_exec_, stream_), "cuGraphLaunch");
      sync();
    }
    double t0 = now_us();
    check(api_.cuGraphLaunch(graph_exec_, stream_), "cuGraphLaunch");
    sync();
    return (now_us() - t0) / n;
  }

 private:
  const nvhcq::cuda::CudaApi& api_;
  nvhcq::cuda::CUcontext ctx_ = nullptr;
  nvhcq::cuda::CUmodule module_ = nullptr;
  nvhcq::cuda::CUfunction fn_ = nullptr;
  nvhcq::cuda::CUstream stream_ = nullptr;
  nvhcq::cuda::CUgraph graph_ = nullptr;
  nvhcq::cuda::CUgraphExec graph_exec_ = nullptr;
};

struct Config {
  int iters = 2000, back_to_back = 10000, graph = 1000, reps = 5;
};

void run(const Config& cfg, NvLauncher* nv, CudaLauncher* cu, Report& report) {
  std::vector<double> nv_rt, cu_rt, nv_chain, nv_subm, cu_b2b, cu_graph;
  for (int i = 0; i < 200; ++i) {  // warm up both paths and the GPU clocks
    if (nv) nv->round_trip_us();
    if (cu) cu->round_trip_us();
  }
  const int blocks = 10, settle = 20;
  int per_block = std::max(1, cfg.iters / blocks);
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < per_block + settle && nv; ++i) {
      double t = nv->round_trip_us();
      if (i >= settle) nv_rt.push_back(t);
    }
    for (int i = 0; i < per_block + settle && cu; ++i) {
      double t = cu->round_trip_us();
      if (i >= settle) cu_rt.push_back(t);
    }
  }
  for (int r = 0; r < cfg.reps; ++r) {
    if (nv) {
      nv->round_trip_us();  // switch the GPU to this context before timing
      nv_chain.push_back(nv->chained_us_per_kernel(cfg.back_to_back));
      nv_subm.push_back(nv->submissions_us_per_kernel(cfg.back_to_back));
    }
    if (cu) {
      cu->round_trip_us();
      cu_b2b.push_back(cu->back_to_back_us_per_kernel(cfg.back_to_back));
      cu_graph.push_back(cu->graph_us_per_kernel(cfg.graph));
    }
  }
  auto round_trip_row = [&](const char* backend, const char* test, const std::vector<double>& s) {
    Stats st = summarize(s);
    report.add_row({{"backend", std::string(backend)}, {"test", std::string(test)}, {"p50 us", st.p50},
                    {"p99 us", st.p99}, {"min us", st.min}});
  };
  auto per_kernel_row = [&](const char* backend, const std::string& test, const std::vector<double>& s) {
    report.add_row({{"backend", std::string(backend)}, {"test", test}, {"per kernel us", summarize(s).p50}});
  };
  if (nv) round_trip_row("nv", "launch + signal round trip", nv_rt);
  if (cu) round_trip_row("cuda", "launch + synchronize round trip", cu_rt);
  std::string n = std::to_string(cfg.back_to_back);
  if (nv) per_kernel_row("nv", n + " back-to-back, one submission (chained QMDs)", nv_chain);
  if (nv) per_kernel_row("nv", n + " back-to-back, a submission each", nv_subm);
  if (cu) per_kernel_row("cuda", n + " back-to-back launches", cu_b2b);
  if (cu) per_kernel_row("cuda", "CUDA graph of " + std::to_string(cfg.graph) + " launches", cu_graph);
  if (nv && cu) {
    double rt = summarize(nv_rt).p50 / summarize(cu_rt).p50;
    double b2b = summarize(nv_chain).p50 / summarize(cu_b2b).p50;
    report.set_meta("nv/cuda round trip p50", std::to_string(rt));
    report.set_meta("nv/cuda back-to-back per kernel", std::to_string(b2b));
  }
}

// Graph replay through the Accelerator interface: `graph` empty launches
// recorded once, replayed and waited for, per kernel. Backends alternate per
// replay after a settling replay; run after the launchers above are closed.
void run_accelerator_graphs(const Config& cfg, const std::string& backends,
                            const std::vector<uint8_t>& cubin, Report& report) {
  struct Entry {
    std::string name;
    std::unique_ptr<gpu::Accelerator> acc;
    std::unique_ptr<gpu::Kernel> kernel;
    std::unique_ptr<gpu::Graph> graph;
    std::vector<double> per_kernel_us;
  };
  std::vector<Entry> entries;
  for (const char* name : {"nv", "cuda"}) {
    if (backends.find(name) == std::string::npos) continue;
    Entry e;
    e.name = name;
    e.acc = nvhcq::cuda::open_accelerator(name);
    e.kernel = e.acc->load(cubin, "empty_kernel");
    e.acc->begin_capture();
    for (int i = 0; i < cfg.graph; ++i) {
      e.acc->launch(*e.kernel, gpu::KernelArgs(), gpu::LaunchDims{});
    }
    e.graph = e.acc->end_capture();
    if (e.graph->launches() != static_cast<size_t>(cfg.graph)) {
      throw Error(std::string(name) + " graph recorded " + std::to_string(e.graph->launches()) +
                  " launches, not " + std::to_string(cfg.graph));
    }
    e.acc->replay(*e.graph);
    e.acc->synchronize();
    entries.push_back(std::move(e));
  }
  const int reps = std::max(5, cfg.reps * 4);
  for (int r = 0; r < reps; ++r) {
    for (auto& e : entries) {
      e.acc->replay(*e.graph);  // settle: the GPU switches to this context
      e.acc->synchronize();
      double t0 = now_us();
      e.acc->replay(*e.graph);
      e.acc->synchronize();
      e.per_kernel_us.push_back((now_us() - t0) / cfg.graph);
    }
  }
  for (auto& e : entries) {
    std::string test = (e.name == "nv" ? "nvhcq graph of " : "CUDA graph (Accelerator) of ") +
                       std::to_string(cfg.graph) + " launches, replay + wait";
    report.add_row(
        {{"backend", e.name}, {"test", test}, {"per kernel us", summarize(e.per_kernel_us).p50}});
  }
  if (entries.size() == 2) {
    report.set_meta("nv/cuda graph replay per kernel",
                    std::to_string(summarize(entries[0].per_kernel_us).p50 /
                                   summarize(entries[1].per_kernel_us).p50));
  }
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_launch",
                   "Kernel launch latency through nvhcq's direct path and the CUDA driver API.");
  parser.option("iters", "N", "round trips to time per backend", "2000")
      .option("back-to-back", "N", "launches in a back-to-back run", "10000")
      .option("graph", "N", "launches in the recorded graphs (0: no Accelerator graph rows)", "1000")
      .option("backend", "LIST", "backends to run: nv, cuda or both", "nv,cuda")
      .option("json", "PATH", "write the results as JSON");
  try {
    auto args = parser.parse(std::vector<std::string>(argv + 1, argv + argc));
    if (args.help_requested()) {
      std::printf("%s", parser.usage().c_str());
      return 0;
    }
    bench::Config cfg;
    cfg.iters = static_cast<int>(args.get_int("iters"));
    cfg.back_to_back = static_cast<int>(args.get_int("back-to-back"));
    cfg.graph = static_cast<int>(args.get_int("graph"));
    std::string backends = args.get("backend");
    std::unique_ptr<bench::NvLauncher> nv;
    std::unique_ptr<bench::CudaLauncher> cu;
    std::vector<uint8_t> cubin;
    {
      auto dev = gpu::Device::open(0);
      compile::CompileOptions opts;
      opts.arch = dev->info().arch();
      cubin = compile::compile_embedded("selftest.cu", opts).cubin;
    }
    if (backends.find("nv") != std::string::npos) nv = std::make_unique<bench::NvLauncher>(cubin);
    if (backends.find("cuda") != std::string::npos) cu = std::make_unique<bench::CudaLauncher>(cubin);
    bench::Report report("launch latency (empty kernel)",
                         {"backend", "test", "p50 us", "p99 us", "min us", "per kernel us"});
    if (nv) {
      report.set_meta("device", nv->name());
      report.set_meta("driver", nv->driver());
    }
    bench::run(cfg, nv.get(), cu.get(), report);
    nv.reset();
    cu.reset();
    if (cfg.graph > 0) bench::run_accelerator_graphs(cfg, backends, cubin, report);
    report.print();
    report.write_json(args.get("json"));
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_launch: %s\n", e.what());
    return 1;
  }
}
