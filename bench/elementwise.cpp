// C4: elementwise kernel bandwidth. add, mul (two inputs), exp, relu (one input)
// over f32 and f16 arrays, through nv and cuda (the same CUBIN). GB/s counts the
// bytes read plus the bytes written. Each kernel is checked once per size against
// a float64 reference (output poisoned first; the first million elements, the
// last 64Ki and a block in the middle) before it is timed. The backends
// alternate batch by batch; rows report the median batch.
//   bench_elementwise [--ops add,mul,exp,relu] [--types f32,f16]
//                     [--counts 1M,10M,100M,256M] [--backend nv,cuda] [--json out.json]

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/args.h"
#include "support/harness.h"
#include "support/host_data.h"

namespace nvhcq::bench {
namespace {

using kernels::ElementwiseOp;
using kernels::GemmType;

struct Config {
  std::vector<ElementwiseOp> ops;
  std::vector<GemmType> types;
  std::vector<uint64_t> counts;
  int blocks = 5;
  double target_ms = 10;
};

ElementwiseOp parse_op(const std::string& s) {
  if (s == "add") return ElementwiseOp::kAdd;
  if (s == "mul") return ElementwiseOp::kMul;
  if (s == "exp") return ElementwiseOp::kExp;
  if (s == "relu") return ElementwiseOp::kRelu;
  throw UsageError("unknown op '" + s + "' (add, mul, exp, relu)");
}

struct Operands {
  std::unique_ptr<gpu::DeviceMemory> a, b, out;
};

class ElementwiseBench {
 public:
  ElementwiseBench(const Config& cfg, std::vector<Backend>& backends)
      : cfg_(cfg), backends_(backends) {}

  void run_count(Report& report, GemmType type, uint64_t n) {
    const size_t es = kernels::gemm_element_bytes(type);
    HostTensor a = random_tensor(type, n, n * 3 + 1, -3.0f, 3.0f);
    HostTensor b = random_tensor(type, n, n * 3 + 2, -3.0f, 3.0f);
    std::vector<Operands> ops(backends_.size());
    for (size_t bi = 0; bi < backends_.size(); ++bi) {
      gpu::Accelerator& acc = *backends_[bi].acc;
      ops[bi].a = acc.alloc(n * es);
      ops[bi].b = acc.alloc(n * es);
      ops[bi].out = acc.alloc(n * es);
      acc.upload(*ops[bi].a, 0, a.bytes.data(), n * es);
      acc.upload(*ops[bi].b, 0, b.bytes.data(), n * es);
    }
    for (ElementwiseOp op : cfg_.ops) {
      kernels::KernelLaunch plan =
          kernels::plan_elementwise(op, type, n, backends_.front().acc->sm_count());
      const int inputs = kernels::elementwise_inputs(op);
      std::vector<const gpu::Kernel*> kern(backends_.size());
      for (size_t bi = 0; bi < backends_.size(); ++bi)
        kern[bi] = &loader_.get(*backends_[bi].acc, plan);
      auto issue = [&](size_t bi) {
        gpu::KernelArgs args;
        args.ptr(ops[bi].out->va()).ptr(ops[bi].a->va());
        if (inputs == 2) args.ptr(ops[bi].b->va());
        args.add(static_cast<uint64_t>(n));
        backends_[bi].acc->launch(*kern[bi], args, dims_of(plan));
      };
      std::vector<bool> failed(backends_.size(), false);
      for (size_t bi = 0; bi < backends_.size(); ++bi) {
        std::string problem = verify(bi, op, type, n, a, b, *ops[bi].out, [&] { issue(bi); });
        if (!problem.empty()) {
          failed[bi] = true;
          failures_.push_back(problem);
          std::fprintf(stderr, "bench_elementwise: CHECK FAILED: %s\n", problem.c_str());
        }
      }

      int reps = 1;
      for (size_t bi = 0; bi < backends_.size(); ++bi) {
        if (failed[bi]) continue;
        issue(bi);
        backends_[bi].acc->synchronize();
        double one = gpu_ms_per_rep(*backends_[bi].acc, 1, [&] { issue(bi); });
        reps = static_cast<int>(std::clamp(cfg_.target_ms / std::max(one, 1e-4), 1.0, 2000.0));
        break;
      }
      std::vector<std::vector<double>> ms(backends_.size());
      for (int blk = 0; blk < cfg_.blocks; ++blk) {
        for (size_t bi = 0; bi < backends_.size(); ++bi) {
          if (failed[bi]) continue;
          issue(bi);
          backends_[bi].acc->synchronize();
          ms[bi].push_back(gpu_ms_per_rep(*backends_[bi].acc, reps, [&] { issue(bi); }));
        }
      }
      const double bytes = static_cast<double>(n) * es * (inputs + 1);
      for (size_t bi = 0; bi < backends_.size(); ++bi) {
        std::map<std::string, Value> row{{"op", std::string(kernels::elementwise_op_name(op))},
                                         {"type", std::string(kernels::gemm_type_name(type))},
                                         {"count", count_label(n)},
                                         {"elements", static_cast<int64_t>(n)},
                                         {"backend", backends_[bi].name},
                                         {"check", std::string(failed[bi] ? "FAILED" : "ok")}};
        if (!failed[bi]) {
          Stats st = summarize(ms[bi]);
          row["GB/s"] = bytes / (st.p50 * 1e-3) / 1e9;
          row["us"] = st.p50 * 1e3;
        }
        report.add_row(std::move(row));
      }
    }
  }

  const std::vector<std::string>& failures() const { return failures_; }

 private:
  // Empty when the kernel's output matches the reference, else what differs.
  std::string verify(size_t bi, ElementwiseOp op, GemmType type, uint64_t n, const HostTensor& a,
                     const HostTensor& b, gpu::DeviceMemory& out,
                     const std::function<void()>& issue) {
    gpu::Accelerator& acc = *backends_[bi].acc;
    const size_t es = kernels::gemm_element_bytes(type);
    std::vector<uint8_t> poison(n * es, 0xff);
    acc.upload(out, 0, poison.data(), poison.size());
    issue();
    acc.synchronize();
    // Ranges checked: the head, the tail, one block in the middle.
    const uint64_t head = std::min<uint64_t>(n, 1000000), tail = std::min<uint64_t>(n, 65536);
    std::vector<std::pair<uint64_t, uint64_t>> ranges = {{0, head}, {n - tail, n}};
    if (n > 2 * 65536) ranges.push_back({n / 2 - 32768, n / 2 + 32768});
    for (auto [lo, hi] : ranges) {
      std::vector<uint8_t> bytes((hi - lo) * es);
      acc.download(bytes.data(), out, lo * es, bytes.size());
      std::vector<float> got = decode(type, bytes, hi - lo);
      for (uint64_t i = lo; i < hi; ++i) {
        double want = kernels::elementwise_reference(op, a.values[i], b.values[i]);
        double g = got[i - lo];
        double tol = type == GemmType::kF32 ? std::fabs(want) * 1e-6 + 1e-30
                                            : std::fabs(want) * 1.5e-3 + 1e-7;
        if (!(std::fabs(g - want) <= tol)) {
          return std::string(kernels::elementwise_op_name(op)) + " " +
                 kernels::gemm_type_name(type) + " n=" + std::to_string(n) + " on " +
                 backends_[bi].name + ": element " + std::to_string(i) + " is " +
                 std::to_string(g) + ", expected " + std::to_string(want);
        }
      }
    }
    return {};
  }

  const Config& cfg_;
  std::vector<Backend>& backends_;
  KernelLoader loader_;
  std::vector<std::string> failures_;
};

int run(const ArgParser::Result& args) {
  Config cfg;
  for (const auto& s : split_list(args.get("ops"))) cfg.ops.push_back(parse_op(s));
  for (const auto& s : split_list(args.get("types"))) {
    GemmType t = kernels::parse_gemm_type(s);
    if (t == GemmType::kBF16) throw UsageError("elementwise types are f32 and f16");
    cfg.types.push_back(t);
  }
  cfg.counts = parse_count_list(args.get("counts"));
  cfg.blocks = static_cast<int>(std::max(1LL, args.get_int("blocks")));
  auto backends = open_backends(args.get("backend"));
  Report report("elementwise bandwidth (C4)",
                {"op", "type", "count", "backend", "check", "GB/s", "us"});
  describe(report, backends);
  report.set_meta("bytes", "read + written");
  report.set_meta("timing", "median of " + std::to_string(cfg.blocks) +
                                " alternating batches, GPU time points");
  ElementwiseBench bench(cfg, backends);
  std::vector<std::string> problems;
  for (GemmType t : cfg.types) {
    for (uint64_t n : cfg.counts) {
      run_part(std::string(kernels::gemm_type_name(t)) + " n=" + count_label(n), problems,
               [&] { bench.run_count(report, t, n); });
    }
  }
  report.print();
  report.write_json(args.get("json"));
  fail_if_problems(problems, "measurement(s)");
  if (!bench.failures().empty()) {
    throw CheckFailure(
        std::to_string(bench.failures().size()) +
        " kernel(s) disagree with the CPU reference; first: " + bench.failures().front());
  }
  return 0;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_elementwise", "Elementwise kernel GB/s through nv and cuda (C4).");
  parser.option("ops", "LIST", "add, mul, exp, relu", "add,mul,exp,relu")
      .option("types", "LIST", "f32, f16", "f32,f16")
      .option("counts", "LIST", "element counts (k = 1000, M = 1000000)", "1M,10M,100M,256M")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("blocks", "N", "alternating timed batches per backend", "5")
      .option("json", "PATH", "write the results as JSON");
  return bench::parse_and_run("bench_elementwise", parser, argc, argv, bench::run);
}
