// C4 through the tensor API: elementwise chains over large f32 and f16 tensors:
// "cheap" (a * 1.01, + 0.01, maximum, minimum, repeated) or "mixed" (tanh in
// place of the minimum, so long chains become compute-bound), which the GPU backend fuses
// into one kernel, on "nv" and "cuda". Each chain runs as a captured Jit graph
// (so the host stays out of the way); GB/s counts the bytes the fused kernel must
// move (inputs read once, the output written once) and is compared with a
// device-to-device copy measured in the same run on the same accelerator. The
// same chain with every op realized (one kernel per op) shows what fusion saves.
// Each configuration is checked once against the CPU backend (the first million
// elements) before it is timed; backends alternate block by block.
//   bench_tensor_chain [--types f32,f16] [--counts 1Mi,16Mi,64Mi,256Mi] [--ops 1,4,16,64]
//                      [--chains cheap,mixed] [--inputs 1,2] [--backend nv,cuda] [--blocks 5]
//                      [--json out.json]

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/args.h"
#include "support/harness.h"
#include "tensor/gpu/gpu_backend.h"
#include "tensor/jit.h"
#include "tensor/realize.h"
#include "tensor/tensor.h"

namespace nvhcq::bench {
namespace {

using tensor::DType;
using tensor::Jit;
using tensor::Tensor;

struct Config {
  std::vector<std::string> chains;
  std::vector<DType> types;
  std::vector<uint64_t> counts;
  std::vector<int> ops, inputs;
  std::vector<std::string> backends;
  int blocks = 5;
  double target_ms = 20;
  double unfused_limit =
      4.0 * (1 << 30);  // bytes of intermediates a captured unfused chain may keep
};

// The chain: `ops` elementwise ops cycling through four; with two inputs it
// starts from a + b. Realizing after each op gives the unfused version.
Tensor chain(const std::vector<Tensor>& in, int ops, bool mixed, bool realize_each) {
  Tensor y = in.size() > 1 ? in[0] + in[1] : in[0];
  for (int i = 0; i < ops; ++i) {
    switch (i % 4) {
      case 0:
        y = y * 1.01;
        break;
      case 1:
        y = y + 0.01;
        break;
      case 2:
        y = y.maximum(-1.5);
        break;
      default:
        y = mixed ? y.tanh() : y.minimum(1.5);
        break;
    }
    if (realize_each) y.realize();
  }
  return y;
}

tensor::GpuBackend& gpu_backend(const std::string& name) {
  auto* b = dynamic_cast<tensor::GpuBackend*>(&tensor::backend_for(name));
  if (b == nullptr) throw UsageError("'" + name + "' is not a GPU tensor backend (nv or cuda)");
  return *b;
}

uint64_t va_of(const Tensor& t) {
  const auto& buf = tensor::base_of(t.node())->buffer;
  return static_cast<const tensor::GpuBuffer&>(*buf).va();
}

// Empty when the device result matches the CPU backend on the first elements.
std::string check(const Tensor& got, const std::vector<Tensor>& host_inputs, int ops, bool mixed,
                  DType t, uint64_t n, const std::string& backend) {
  const int64_t m = static_cast<int64_t>(std::min<uint64_t>(n, 1u << 20));
  std::vector<Tensor> prefix;
  for (const auto& h : host_inputs) prefix.push_back(h.slice(0, 0, m));
  std::vector<float> want = chain(prefix, ops, mixed, false).to_vector<float>();
  std::vector<float> all = got.slice(0, 0, m).to_vector<float>();
  const float tol = t == DType::kF32 ? 2e-5f : 4e-3f;
  for (int64_t i = 0; i < m; ++i) {
    if (!(std::fabs(all[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      return std::string(tensor::dtype_name(t)) + " n=" + std::to_string(n) +
             " ops=" + std::to_string(ops) + " on " + backend + ": element " + std::to_string(i) +
             " is " + std::to_string(all[i]) + ", the CPU gives " + std::to_string(want[i]);
    }
  }
  return {};
}

int run(const ArgParser::Result& args) {
  Config cfg;
  for (const auto& s : split_list(args.get("types"))) {
    DType t = tensor::parse_dtype(s);
    if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16)
      throw UsageError("types are f32, f16 and bf16");
    cfg.types.push_back(t);
  }
  cfg.counts = parse_count_list(args.get("counts"));
  cfg.chains = split_list(args.get("chains"));
  for (const auto& c : cfg.chains) {
    if (c != "cheap" && c != "mixed")
      throw UsageError("chains are cheap and mixed, not '" + c + "'");
  }
  for (const auto& s : split_list(args.get("ops"))) cfg.ops.push_back(std::max(1, std::stoi(s)));
  for (const auto& s : split_list(args.get("inputs")))
    cfg.inputs.push_back(std::clamp(std::stoi(s), 1, 2));
  cfg.backends = parse_backend_list(args.get("backend"));
  cfg.blocks = static_cast<int>(std::max(1LL, args.get_int("blocks")));
  cfg.unfused_limit = static_cast<double>(parse_count_list(args.get("unfused-limit")).at(0));

  std::vector<tensor::GpuBackend*> gpus;
  for (const auto& b : cfg.backends) gpus.push_back(&gpu_backend(b));
  Report report("tensor elementwise chains (C4, tensor API)",
                {"chain", "type", "count", "inputs", "ops", "backend", "check", "kernels", "us",
                 "GB/s", "copy GB/s", "% of copy", "unfused us", "fusion speedup"});
  gpu::Accelerator& first = gpus.front()->accelerator();
  report.set_meta("device", first.device_name() + " (" + first.arch() + ", " +
                                std::to_string(first.sm_count()) + " SMs)");
  report.set_meta("bytes",
                  "inputs read once + output written once (what the fused kernel must move)");
  report.set_meta("copy",
                  "Accelerator::copy of the output's size, same run, same accelerator; GB/s = 2 x "
                  "bytes / time");
  report.set_meta("timing", "Jit replays; median of " + std::to_string(cfg.blocks) +
                                " alternating blocks, GPU time points");
  report.set_meta("goal", ">= 80% of the copy bandwidth for large chains");

  std::vector<std::string> failures;
  for (DType t : cfg.types) {
    for (uint64_t n : cfg.counts) {
      const size_t bytes = n * tensor::dtype_size(t);
      std::vector<Tensor> host_inputs = {
          Tensor::rand({static_cast<int64_t>(n)}, n + 1, t) * 2.0 - 1.0,
          Tensor::rand({static_cast<int64_t>(n)}, n + 2, t) * 2.0 - 1.0};
      Tensor::realize_all(host_inputs);
      std::vector<std::vector<Tensor>> dev_inputs;
      std::vector<std::shared_ptr<tensor::Buffer>> scratch;
      for (size_t bi = 0; bi < gpus.size(); ++bi) {
        dev_inputs.push_back(
            {host_inputs[0].to(cfg.backends[bi]), host_inputs[1].to(cfg.backends[bi])});
        scratch.push_back(gpus[bi]->allocate(bytes));
      }
      // Device-to-device copy bandwidth, per backend.
      std::vector<std::vector<double>> copy_ms(gpus.size());
      for (int blk = 0; blk < cfg.blocks; ++blk) {
        for (size_t bi = 0; bi < gpus.size(); ++bi) {
          gpu::Accelerator& acc = gpus[bi]->accelerator();
          const uint64_t src = va_of(dev_inputs[bi][0]);
          const uint64_t dst = static_cast<const tensor::GpuBuffer&>(*scratch[bi]).va();
          auto body = [&] { acc.copy(dst, src, bytes); };
          if (blk == 0) warm_up(acc, 1.0, body);  // after the host made the inputs
          body();
          acc.synchronize();
          copy_ms[bi].push_back(
              gpu_ms_per_rep(acc, reps_for(acc, cfg.target_ms, 1000, body), body));
        }
      }
      for (const std::string& kind : cfg.chains) {
        const bool mixed = kind == "mixed";
        for (int inputs : cfg.inputs) {
          for (int ops : cfg.ops) {
            std::vector<Jit> fused, unfused;
            // A captured unfused chain keeps every intermediate: only when they fit.
            const bool time_unfused = static_cast<double>(ops + 1) * bytes <= cfg.unfused_limit;
            std::vector<std::string> problem(gpus.size());
            std::vector<size_t> kernels(gpus.size(), 0);
            for (size_t bi = 0; bi < gpus.size(); ++bi) {
              fused.emplace_back([ops, mixed](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{chain(in, ops, mixed, false)};
              });
              unfused.emplace_back([ops, mixed](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{chain(in, ops, mixed, true)};
              });
              std::vector<Tensor> in(dev_inputs[bi].begin(), dev_inputs[bi].begin() + inputs);
              std::vector<Tensor> hin(host_inputs.begin(), host_inputs.begin() + inputs);
              for (int w = 0; w < 3; ++w) {
                (void)fused[bi](in);
                if (time_unfused) (void)unfused[bi](in);
              }
              problem[bi] = check(fused[bi](in)[0], hin, ops, mixed, t, n, cfg.backends[bi]);
              kernels[bi] = fused[bi].captured_launches();
              if (!problem[bi].empty()) {
                std::fprintf(stderr, "bench_tensor_chain: CHECK FAILED: %s\n", problem[bi].c_str());
                failures.push_back(problem[bi]);
              }
            }
            std::vector<std::vector<double>> ms(gpus.size()), ums(gpus.size());
            for (int blk = 0; blk < cfg.blocks; ++blk) {
              for (size_t bi = 0; bi < gpus.size(); ++bi) {
                if (!problem[bi].empty()) continue;
                gpu::Accelerator& acc = gpus[bi]->accelerator();
                std::vector<Tensor> in(dev_inputs[bi].begin(), dev_inputs[bi].begin() + inputs);
                auto f = [&] { (void)fused[bi](in); };
                auto u = [&] { (void)unfused[bi](in); };
                f();
                acc.synchronize();
                ms[bi].push_back(gpu_ms_per_rep(acc, reps_for(acc, cfg.target_ms, 1000, f), f));
                if (time_unfused)
                  ums[bi].push_back(gpu_ms_per_rep(acc, reps_for(acc, cfg.target_ms, 200, u), u));
              }
            }
            const double moved = static_cast<double>(bytes) * (inputs + 1);
            for (size_t bi = 0; bi < gpus.size(); ++bi) {
              std::map<std::string, Value> row{
                  {"chain", kind},
                  {"type", std::string(tensor::dtype_name(t))},
                  {"count", count_label(n)},
                  {"elements", static_cast<int64_t>(n)},
                  {"inputs", static_cast<int64_t>(inputs)},
                  {"ops", static_cast<int64_t>(ops)},
                  {"backend", cfg.backends[bi]},
                  {"check", std::string(problem[bi].empty() ? "ok" : "FAILED")},
                  {"kernels", static_cast<int64_t>(kernels[bi])}};
              const double copy = 2.0 * bytes / (summarize(copy_ms[bi]).p50 * 1e-3) / 1e9;
              row["copy GB/s"] = copy;
              if (problem[bi].empty()) {
                const Stats st = summarize(ms[bi]);
                const double gbs = moved / (st.p50 * 1e-3) / 1e9;
                row["us"] = st.p50 * 1e3;
                row["GB/s"] = gbs;
                row["% of copy"] = 100.0 * gbs / copy;
                if (time_unfused) {
                  const Stats ust = summarize(ums[bi]);
                  row["unfused us"] = ust.p50 * 1e3;
                  row["fusion speedup"] = ust.p50 / st.p50;
                }
              }
              report.add_row(std::move(row));
            }
          }
        }
      }
    }
  }
  report.print();
  report.write_json(args.get("json"));
  if (!failures.empty()) {
    throw CheckFailure(std::to_string(failures.size()) +
                       " chain(s) disagree with the CPU backend; first: " + failures.front());
  }
  return 0;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_tensor_chain",
                   "Fused elementwise chains through the tensor API on nv and cuda (C4).");
  parser.option("types", "LIST", "f32, f16, bf16", "f32,f16")
      .option("counts", "LIST", "element counts (k, M, Ki, Mi, Gi suffixes)", "1Mi,16Mi,64Mi,256Mi")
      .option("ops", "LIST", "ops per chain", "1,4,16,64")
      .option("chains", "LIST",
              "cheap (mul, add, maximum, minimum) and/or mixed (tanh for minimum)", "cheap,mixed")
      .option("inputs", "LIST", "1 (a chain on x) or 2 (starting from x + y)", "1,2")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("blocks", "N", "alternating timed blocks per backend", "5")
      .option("unfused-limit", "BYTES",
              "time the unfused chain when its intermediates fit (Ki, Mi, Gi)", "4Gi")
      .option("json", "PATH", "write the results as JSON");
  return bench::parse_and_run("bench_tensor_chain", parser, argc, argv, bench::run);
}
