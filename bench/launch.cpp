// Launch latency: one empty kernel launched and waited for (round trip), and
// long runs of back-to-back launches, through nvhcq's direct path ("nv") and the
// CUDA driver API ("cuda"), on the same CUBIN, in one process.
//   bench_launch [--iters 2000] [--back-to-back 10000] [--json out.json]

#include <cstdio>
#include <memory>
#include <vector>

#include "base/args.h"
#include "base/error.h"
#include "compile/compiler.h"
#include "cuda/cuda_api.h"
#include "gpu/device.h"
#include "gpu/program.h"
#include "gpu/queue.h"
#include "support/report.h"

namespace nvhcq::bench {
namespace {

struct Config {
  int iters = 2000;
  int back_to_back = 10000;
  int graph = 1000;
};

void bench_nv(const Config& cfg, const std::vector<uint8_t>& cubin, Report& report) {
  auto dev = gpu::Device::open(0);
  gpu::Program empty(*dev, cubin, "empty_kernel");
  gpu::Signal s = dev->new_signal(0);
  uint64_t v = 0;
  auto round_trip = [&] {
    gpu::ComputeQueue().exec(empty, gpu::KernelArgs(), gpu::LaunchDims{}).signal(s, ++v).submit(*dev);
    dev->wait(s, v);
  };
  for (int i = 0; i < 200; ++i) round_trip();
  std::vector<double> samples;
  for (int i = 0; i < cfg.iters; ++i) {
    double t0 = now_us();
    round_trip();
    samples.push_back(now_us() - t0);
  }
  Stats st = summarize(samples);
  report.add_row({{"backend", std::string("nv")}, {"test", std::string("launch + signal round trip")},
                  {"p50 us", st.p50}, {"p99 us", st.p99}, {"min us", st.min}});

  // Back-to-back, one submission: the launches are chained QMDs.
  gpu::ComputeQueue chained;
  for (int i = 0; i < cfg.back_to_back; ++i) chained.exec(empty, gpu::KernelArgs(), gpu::LaunchDims{});
  gpu::Signal t_begin = dev->new_signal(0), t_end = dev->new_signal(0);
  chained.signal(s, ++v);
  std::vector<double> per_kernel, gpu_per_kernel;
  for (int rep = 0; rep < 5; ++rep) {
    chained.update_signal(chained.size() - 1, s.va(), ++v);
    double t0 = now_us();
    chained.submit(*dev);
    dev->wait(s, v);
    per_kernel.push_back((now_us() - t0) / cfg.back_to_back);
  }
  st = summarize(per_kernel);
  report.add_row({{"backend", std::string("nv")},
                  {"test", std::string("back-to-back, one submission (chained QMDs)")},
                  {"per kernel us", st.p50}});

  // Back-to-back, a submission per launch.
  per_kernel.clear();
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now_us();
    for (int i = 0; i < cfg.back_to_back; ++i) {
      gpu::ComputeQueue().exec(empty, gpu::KernelArgs(), gpu::LaunchDims{}).submit(*dev);
    }
    dev->synchronize();
    per_kernel.push_back((now_us() - t0) / cfg.back_to_back);
  }
  st = summarize(per_kernel);
  report.add_row({{"backend", std::string("nv")},
                  {"test", std::string("back-to-back, a submission per launch")},
                  {"per kernel us", st.p50}});
}

void bench_cuda(const Config& cfg, const std::vector<uint8_t>& cubin, Report& report) {
  using namespace nvhcq::cuda;
  const CudaApi& api = nvhcq::cuda::cuda();
  CUdevice dev;
  check(api.cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx;
  check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule mod;
  check(api.cuModuleLoadData(&mod, cubin.data()), "cuModuleLoadData");
  CUfunction fn;
  check(api.cuModuleGetFunction(&fn, mod, "empty_kernel"), "cuModuleGetFunction");
  CUstream stream;
  check(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  auto launch = [&] {
    check(api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr), "cuLaunchKernel");
  };
  for (int i = 0; i < 200; ++i) {
    launch();
    check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  std::vector<double> samples;
  for (int i = 0; i < cfg.iters; ++i) {
    double t0 = now_us();
    launch();
    check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    samples.push_back(now_us() - t0);
  }
  Stats st = summarize(samples);
  report.add_row({{"backend", std::string("cuda")}, {"test", std::string("launch + synchronize round trip")},
                  {"p50 us", st.p50}, {"p99 us", st.p99}, {"min us", st.min}});

  std::vector<double> per_kernel;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now_us();
    for (int i = 0; i < cfg.back_to_back; ++i) launch();
    check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    per_kernel.push_back((now_us() - t0) / cfg.back_to_back);
  }
  report.add_row({{"backend", std::string("cuda")}, {"test", std::string("back-to-back launches")},
                  {"per kernel us", summarize(per_kernel).p50}});

  CUgraph graph;
  check(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  for (int i = 0; i < cfg.graph; ++i) launch();
  check(api.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  CUgraphExec exec;
  check(api.cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  check(api.cuGraphLaunch(exec, stream), "cuGraphLaunch");
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  per_kernel.clear();
  for (int rep = 0; rep < 10; ++rep) {
    double t0 = now_us();
    check(api.cuGraphLaunch(exec, stream), "cuGraphLaunch");
    check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    per_kernel.push_back((now_us() - t0) / cfg.graph);
  }
  report.add_row({{"backend", std::string("cuda")},
                  {"test", std::string("CUDA graph of " + std::to_string(cfg.graph) + " launches")},
                  {"per kernel us", summarize(per_kernel).p50}});
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
  api.cuStreamDestroy(stream);
  api.cuModuleUnload(mod);
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_launch",
                   "Kernel launch latency through nvhcq's direct path and the CUDA driver API.");
  parser.option("iters", "N", "round trips to time", "2000")
      .option("back-to-back", "N", "launches in a back-to-back run", "10000")
      .option("graph", "N", "launches in the CUDA graph", "1000")
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
    auto dev = gpu::Device::open(0);
    compile::CompileOptions opts;
    opts.arch = dev->info().arch();
    auto cubin = compile::compile_embedded("selftest.cu", opts).cubin;
    bench::Report report("launch latency (empty kernel)",
                         {"backend", "test", "p50 us", "p99 us", "min us", "per kernel us"});
    report.set_meta("device", dev->info().name + " (" + dev->info().arch() + ")");
    report.set_meta("driver", dev->info().driver_version);
    dev.reset();
    if (backends.find("nv") != std::string::npos) bench::bench_nv(cfg, cubin, report);
    if (backends.find("cuda") != std::string::npos) bench::bench_cuda(cfg, cubin, report);
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
