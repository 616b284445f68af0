// C1: matrix product throughput. nvhcq's GEMM kernels (f32 on the CUDA cores,
// f16/bf16 on the tensor cores: mma.sync, and on sm_90 also the warpgroup wgmma
// kernel) through the direct path ("nv") and the CUDA driver API ("cuda"), the
// same CUBIN on both, plus cuBLAS on the cuda backend's context as the ceiling,
// in one run. Square sizes; GFLOP/s = 2*M*N*K / time. Rows carry the kernel
// family: simt, mma, wgmma, cublas.
//
// Every product is first checked against a float64 CPU reference (random
// inputs, C poisoned with NaN): in full up to 512^3, else at sampled entries and
// the whole last row and column. Timing: GPU time points around a batch of
// back-to-back launches (~target-ms each); the backends alternate batch by
// batch, and each row reports the median batch.
//   bench_matmul [--types f32,f16,bf16] [--sizes 256,...,8192] [--backend nv,cuda]
//                [--variant NAME] [--sweep] [--no-cublas] [--json out.json]
// --sweep times every tile configuration (gemm_variants) at --sweep-size instead.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "base/args.h"
#include "cuda/cublas_api.h"
#include "support/harness.h"
#include "support/host_data.h"

namespace nvhcq::bench {
namespace {

using kernels::GemmType;

struct Config {
  std::vector<GemmType> types;
  std::vector<uint64_t> sizes;
  std::string variant;
  bool sweep = false;
  uint32_t sweep_size = 4096;
  bool cublas = true;
  bool wgmma = true;
  int blocks = 5;
  double target_ms = 20;
};

cuda::CublasGemmType cublas_type(GemmType t) {
  switch (t) {
    case GemmType::kF32:
      return cuda::CublasGemmType::kF32;
    case GemmType::kF16:
      return cuda::CublasGemmType::kF16;
    case GemmType::kBF16:
      return cuda::CublasGemmType::kBF16;
  }
  return cuda::CublasGemmType::kF32;
}

// One contender: a backend running nvhcq's kernel, or cuBLAS.
struct Runner {
  std::string name;                 // "nv", "cuda", "cublas"
  gpu::Accelerator* acc = nullptr;  // whose memory it uses (cuda's for cublas)
  const gpu::Kernel* kernel = nullptr;
  std::unique_ptr<gpu::DeviceMemory> a, b, c;
  gpu::LaunchDims dims;
  std::vector<double> ms;  // per timed batch
  bool failed = false;
  std::string kernel_label;
  std::string family;  // "simt", "mma", "wgmma" or "cublas"
};

class MatmulBench {
 public:
  MatmulBench(const Config& cfg, std::vector<Backend>& backends, cuda::CublasGemm* cublas)
      : cfg_(cfg), backends_(backends), cublas_(cublas) {}

  void run_size(Report& report, GemmType type, uint32_t n, const std::string& variant) {
    const uint32_t m = n, k = n;
    const size_t es = kernels::gemm_element_bytes(type);
    const uint64_t seed = (uint64_t{n} << 8) ^ static_cast<uint64_t>(type);
    HostTensor a = random_tensor(type, size_t{m} * k, seed * 2 + 1);
    HostTensor b = random_tensor(type, size_t{k} * n, seed * 2 + 2);
    std::vector<uint8_t> poison(size_t{m} * n * es, 0xff);  // NaN in f32, f16 and bf16
    // nvhcq's kernel(s) on every backend: the automatic choice, and on sm_90 the
    // warpgroup (wgmma) kernel as a second family; or the one --variant names.
    kernels::GemmProblem problem{type, m, n, k, true, backends_.front().acc->arch()};
    std::vector<kernels::KernelLaunch> plans;
    const uint32_t sms = backends_.front().acc->sm_count();
    plans.push_back(kernels::plan_gemm(problem, sms, variant));
    if (variant.empty() && cfg_.wgmma && kernels::wgmma_applies(problem)) {
      plans.push_back(kernels::plan_gemm(problem, sms, kernels::kWgmmaVariant));
    }

    std::vector<Runner> runners;
    for (const auto& plan : plans) {
      for (auto& be : backends_) {
        Runner r;
        r.name = be.name;
        r.acc = be.acc.get();
        r.kernel = &loader_.get(*be.acc, plan);
        r.dims = dims_of(plan);
        r.kernel_label = plan.variant;
        r.family = plan.variant.substr(0, plan.variant.find(' '));
        runners.push_back(std::move(r));
      }
    }
    if (cublas_ != nullptr) {
      for (auto& be : backends_) {
        if (be.name != "cuda") continue;
        Runner r;
        r.name = "cublas";
        r.acc = be.acc.get();
        r.kernel_label = "cuBLAS " + std::to_string(cublas_->version());
        r.family = "cublas";
        runners.push_back(std::move(r));
      }
    }
    for (auto& r : runners) {
      r.a = r.acc->alloc(a.bytes.size());
      r.b = r.acc->alloc(b.bytes.size());
      r.c = r.acc->alloc(poison.size());
      r.acc->upload(*r.a, 0, a.bytes.data(), a.bytes.size());
      r.acc->upload(*r.b, 0, b.bytes.data(), b.bytes.size());
    }

    auto issue = [&](Runner& r) {
      if (r.kernel == nullptr) {
        cublas_->gemm(cublas_type(type), r.c->va(), r.a->va(), r.b->va(), static_cast<int>(m),
                      static_cast<int>(n), static_cast<int>(k));
        return;
      }
      gpu::KernelArgs args;
      args.ptr(r.c->va()).ptr(r.a->va()).ptr(r.b->va());
      args.add(static_cast<int32_t>(m)).add(static_cast<int32_t>(n)).add(static_cast<int32_t>(k));
      r.acc->launch(*r.kernel, args, r.dims);
    };
    auto sync = [&](Runner& r) {
      if (r.kernel == nullptr) {
        cublas_->synchronize();
      } else {
        r.acc->synchronize();
      }
    };
    auto time_batch = [&](Runner& r, int reps) {
      if (r.kernel == nullptr) {
        return cublas_->time_ms(cublas_type(type), r.c->va(), r.a->va(), r.b->va(),
                                static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                                reps);
      }
      return gpu_ms_per_rep(*r.acc, reps, [&] { issue(r); });
    };

    // Correctness first: poisoned C, one product, float64 reference.
    const double tol = gemm_tolerance(type, k);
    for (auto& r : runners) {
      r.acc->upload(*r.c, 0, poison.data(), poison.size());
      issue(r);
      sync(r);
      std::vector<uint8_t> out(poison.size());
      r.acc->download(out.data(), *r.c, 0, out.size());
      Agreement ag = check_gemm(a.values, b.values, decode(type, out, size_t{m} * n), m, n, k);
      if (!ag.ok(tol)) {
        r.failed = true;
        failures_.push_back(std::string(kernels::gemm_type_name(type)) + " " + std::to_string(n) +
                            "^3 on " + r.name + " (" + r.kernel_label + "): " + ag.describe() +
                            ", tolerance " + std::to_string(tol));
        std::fprintf(stderr, "bench_matmul: CHECK FAILED: %s\n", failures_.back().c_str());
      }
    }

    // Batches sized on the first healthy runner, alternated between runners.
    int reps = 1;
    for (auto& r : runners) {
      if (r.failed) continue;
      issue(r);  // warm
      sync(r);
      double one = time_batch(r, 1);
      reps = static_cast<int>(std::clamp(cfg_.target_ms / std::max(one, 1e-4), 1.0, 1000.0));
      break;
    }
    for (int blk = 0; blk < cfg_.blocks; ++blk) {
      for (auto& r : runners) {
        if (r.failed) continue;
        issue(r);  // the GPU switches to this context before the batch starts
        sync(r);
        r.ms.push_back(time_batch(r, reps));
      }
    }

    const double flop = 2.0 * m * n * k;
    double cublas_tflops = 0;
    for (auto& r : runners) {
      if (r.name == "cublas" && !r.failed)
        cublas_tflops = flop / (summarize(r.ms).p50 * 1e-3) / 1e12;
    }
    for (auto& r : runners) {
      std::map<std::string, Value> row{{"type", std::string(kernels::gemm_type_name(type))},
                                       {"size", static_cast<int64_t>(n)},
                                       {"backend", r.name},
                                       {"family", r.family},
                                       {"kernel", r.kernel_label}};
      if (r.failed) {
        row["check"] = std::string("FAILED");
      } else {
        Stats st = summarize(r.ms);
        double tflops = flop / (st.p50 * 1e-3) / 1e12;
        // Progress in the log, row by row: what was measured survives a later crash.
        std::fprintf(stderr, "bench_matmul: %s %u on %s (%s): %.3f ms, %.1f TFLOP/s\n",
                     kernels::gemm_type_name(type), n, r.name.c_str(), r.kernel_label.c_str(),
                     st.p50, tflops);
        row["check"] = std::string("ok");
        row["ms"] = st.p50;
        row["min ms"] = st.min;
        row["TFLOP/s"] = tflops;
        row["GFLOP/s"] = tflops * 1e3;
        if (cublas_tflops > 0) row["% of cuBLAS"] = 100.0 * tflops / cublas_tflops;
      }
      report.add_row(std::move(row));
    }
  }

  const std::vector<std::string>& failures() const { return failures_; }

 private:
  const Config& cfg_;
  std::vector<Backend>& backends_;
  cuda::CublasGemm* cublas_;
  KernelLoader loader_;
  std::vector<std::string> failures_;
};

int run(const ArgParser::Result& args) {
  Config cfg;
  for (const auto& t : split_list(args.get("types")))
    cfg.types.push_back(kernels::parse_gemm_type(t));
  cfg.sizes = parse_count_list(args.get("sizes"));
  cfg.variant = args.get("variant");
  cfg.sweep = args.flag("sweep");
  cfg.sweep_size = static_cast<uint32_t>(args.get_int("sweep-size"));
  cfg.cublas = !args.flag("no-cublas");
  cfg.wgmma = !args.flag("no-wgmma");
  cfg.blocks = static_cast<int>(std::max(1LL, args.get_int("blocks")));
  cfg.target_ms = args.get_double("target-ms");
  for (uint64_t s : cfg.sizes) {
    if (s > 32768) throw UsageError("size " + std::to_string(s) + " is over 32768");
  }

  auto backends = open_backends(args.get("backend"));
  std::unique_ptr<cuda::CublasGemm> cublas;
  bool has_cuda = std::any_of(backends.begin(), backends.end(),
                              [](const Backend& b) { return b.name == "cuda"; });
  std::string cublas_note = "not run (--no-cublas)";
  if (cfg.cublas && !has_cuda) cublas_note = "not run (needs the cuda backend)";
  if (cfg.cublas && has_cuda) {
    try {
      cublas = std::make_unique<cuda::CublasGemm>(0);
      cublas_note = cuda::cublas().path + " (version " + std::to_string(cublas->version()) + ")";
    } catch (const Error& e) {
      cublas_note = std::string("unavailable: ") + e.what();
      std::fprintf(stderr, "bench_matmul: cuBLAS %s\n", cublas_note.c_str());
    }
  }

  Report report(
      cfg.sweep ? "matmul tile configurations" : "matmul (C1)",
      {"type", "size", "backend", "family", "kernel", "check", "ms", "TFLOP/s", "% of cuBLAS"});
  describe(report, backends);
  report.set_meta("cuBLAS", cublas_note);
  report.set_meta("timing",
                  "median of " + std::to_string(cfg.blocks) + " alternating batches of ~" +
                      std::to_string(static_cast<int>(cfg.target_ms)) + " ms, GPU time points");
  MatmulBench bench(cfg, backends, cublas.get());
  std::vector<std::string> problems;
  for (GemmType type : cfg.types) {
    if (cfg.sweep) {
      for (const auto& v : kernels::gemm_variants(type, backends.front().acc->arch())) {
        if (!cfg.wgmma && v == kernels::kWgmmaVariant) continue;
        run_part(std::string(kernels::gemm_type_name(type)) + " " + v, problems,
                 [&] { bench.run_size(report, type, cfg.sweep_size, v); });
      }
    } else {
      for (uint64_t n : cfg.sizes)
        bench.run_size(report, type, static_cast<uint32_t>(n), cfg.variant);
    }
  }
  report.print();
  report.write_json(args.get("json"));
  fail_if_problems(problems, "size(s)");
  if (!bench.failures().empty()) {
    throw CheckFailure(
        std::to_string(bench.failures().size()) +
        " product(s) disagree with the CPU reference; first: " + bench.failures().front());
  }
  return 0;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_matmul",
                   "Matrix product GFLOP/s: nvhcq's kernels on nv and cuda, and cuBLAS (C1).");
  parser.option("types", "LIST", "element types: f32, f16, bf16", "f32,f16,bf16")
      .option("sizes", "LIST", "square sizes", "256,512,1024,2048,4096,8192")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("variant", "NAME", "force one tile configuration (see --sweep)")
      .flag("sweep", "time every tile configuration at --sweep-size instead")
      .option("sweep-size", "N", "size for --sweep", "4096")
      .flag("no-cublas", "leave cuBLAS out")
      .flag("no-wgmma", "leave the sm_90 warpgroup (wgmma) kernel out")
      .option("blocks", "N", "alternating timed batches per contender", "5")
      .option("target-ms", "MS", "GPU time per batch", "20")
      .option("json", "PATH", "write the results as JSON");
  return bench::parse_and_run("bench_matmul", parser, argc, argv, bench::run);
}
