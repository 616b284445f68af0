// C5 through the tensor API: an MLP forward pass (linear + bias + relu layers,
// nn::linear) on "nv" and "cuda", for several batch sizes and dtypes. Each
// forward runs as a captured Jit graph (matmul kernels plus fused bias+relu
// kernels, replayed as one submission on nv, a CUDA graph on cuda) and, for
// comparison, eagerly (the graph planned, generated and launched on every call).
// The output is checked once against the CPU backend (the first rows) before
// timing; backends alternate block by block.
//   bench_tensor_mlp [--batch 1,32,256,2048] [--dims 1024,4096,4096,1024] [--types f32,f16]
//                    [--backend nv,cuda] [--blocks 5] [--json out.json]

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/args.h"
#include "support/harness.h"
#include "tensor/gpu/gpu_backend.h"
#include "tensor/jit.h"
#include "tensor/nn.h"
#include "tensor/tensor.h"

namespace nvhcq::bench {
namespace {

using tensor::DType;
using tensor::Jit;
using tensor::Tensor;
namespace nn = tensor::nn;

struct Layer {
  Tensor w, b;  // [out, in], [out]
};

Tensor forward(const std::vector<Layer>& layers, Tensor x) {
  for (size_t i = 0; i < layers.size(); ++i) {
    x = nn::linear(x, layers[i].w, layers[i].b);
    if (i + 1 < layers.size()) x = x.relu();
  }
  return x;
}

std::vector<Layer> make_layers(const std::vector<int64_t>& dims, DType t,
                               const std::string& device) {
  std::vector<Layer> layers;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(dims[i]));
    Tensor w = (Tensor::randn({dims[i + 1], dims[i]}, 11 + i) * scale).cast(t);
    Tensor b = (Tensor::randn({dims[i + 1]}, 101 + i) * 0.1).cast(t);
    layers.push_back({w.to(device), b.to(device)});
  }
  return layers;
}

int run(const ArgParser::Result& args) {
  std::vector<int64_t> batches, dims;
  for (uint64_t b : parse_count_list(args.get("batch"))) batches.push_back(static_cast<int64_t>(b));
  for (uint64_t d : parse_count_list(args.get("dims"))) dims.push_back(static_cast<int64_t>(d));
  if (dims.size() < 2) throw UsageError("--dims needs at least two sizes (input, output)");
  std::vector<DType> types;
  for (const auto& s : split_list(args.get("types"))) types.push_back(tensor::parse_dtype(s));
  const std::vector<std::string> backends = parse_backend_list(args.get("backend"));
  const int blocks = static_cast<int>(std::max(1LL, args.get_int("blocks")));
  const double target_ms = 20;

  std::vector<tensor::GpuBackend*> gpus;
  for (const auto& b : backends) {
    auto* g = dynamic_cast<tensor::GpuBackend*>(&tensor::backend_for(b));
    if (g == nullptr) throw UsageError("'" + b + "' is not a GPU tensor backend");
    gpus.push_back(g);
  }
  std::string dims_text;
  for (int64_t d : dims) dims_text += (dims_text.empty() ? "" : "x") + std::to_string(d);
  Report report("tensor MLP forward (C5, tensor API)",
                {"type", "batch", "backend", "check", "kernels", "jit us", "TFLOP/s", "eager us",
                 "jit speedup"});
  gpu::Accelerator& first = gpus.front()->accelerator();
  report.set_meta("device", first.device_name() + " (" + first.arch() + ", " +
                                std::to_string(first.sm_count()) + " SMs)");
  report.set_meta("layers", dims_text + " (linear + bias, relu between layers)");
  report.set_meta("timing", "GPU time per forward; median of " + std::to_string(blocks) +
                                " alternating blocks");
  report.set_meta("eager",
                  "the same forward without the Jit: planned, generated and launched every call");

  std::vector<std::string> failures;
  for (DType t : types) {
    std::vector<std::vector<Layer>> layers;
    for (const auto& b : backends) layers.push_back(make_layers(dims, t, b));
    const std::vector<Layer> host_layers = make_layers(dims, t, "cpu");
    for (int64_t batch : batches) {
      Tensor x_host = Tensor::randn({batch, dims.front()}, 7 + batch).cast(t);
      x_host.realize();
      double flops = 0;
      for (size_t i = 0; i + 1 < dims.size(); ++i) flops += 2.0 * batch * dims[i] * dims[i + 1];
      std::vector<Jit> jits;
      std::vector<Tensor> xs;
      std::vector<std::string> problem(gpus.size());
      for (size_t bi = 0; bi < gpus.size(); ++bi) {
        const auto& ls = layers[bi];
        jits.emplace_back([&ls](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{forward(ls, in[0])};
        });
        xs.push_back(x_host.to(backends[bi]));
        for (int w = 0; w < 3; ++w) (void)jits[bi]({xs[bi]});
        // Check: the first rows against the CPU backend.
        const int64_t rows = std::min<int64_t>(batch, 8);
        std::vector<float> want = forward(host_layers, x_host.slice(0, 0, rows)).to_vector<float>();
        std::vector<float> got = jits[bi]({xs[bi]})[0].slice(0, 0, rows).to_vector<float>();
        const float tol = t == DType::kF32 ? 1e-3f : 3e-2f;
        for (size_t i = 0; i < want.size() && problem[bi].empty(); ++i) {
          if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
            problem[bi] = std::string(tensor::dtype_name(t)) + " batch " + std::to_string(batch) +
                          " on " + backends[bi] + ": output " + std::to_string(i) + " is " +
                          std::to_string(got[i]) + ", the CPU gives " + std::to_string(want[i]);
          }
        }
        if (!problem[bi].empty()) {
          std::fprintf(stderr, "bench_tensor_mlp: CHECK FAILED: %s\n", problem[bi].c_str());
          failures.push_back(problem[bi]);
        }
      }
      std::vector<std::vector<double>> jit_ms(gpus.size()), eager_ms(gpus.size());
      for (int blk = 0; blk < blocks; ++blk) {
        for (size_t bi = 0; bi < gpus.size(); ++bi) {
          if (!problem[bi].empty()) continue;
          gpu::Accelerator& acc = gpus[bi]->accelerator();
          auto jit_call = [&] { (void)jits[bi]({xs[bi]}); };
          auto eager_call = [&] { forward(layers[bi], xs[bi]).realize(); };
          if (blk == 0) warm_up(acc, 0.5, jit_call);  // after the host-side check
          jit_call();
          acc.synchronize();
          jit_ms[bi].push_back(
              gpu_ms_per_rep(acc, reps_for(acc, target_ms, 2000, jit_call), jit_call));
          eager_ms[bi].push_back(
              gpu_ms_per_rep(acc, reps_for(acc, target_ms, 2000, eager_call), eager_call));
        }
      }
      for (size_t bi = 0; bi < gpus.size(); ++bi) {
        std::map<std::string, Value> row{
            {"type", std::string(tensor::dtype_name(t))},
            {"batch", static_cast<int64_t>(batch)},
            {"backend", backends[bi]},
            {"check", std::string(problem[bi].empty() ? "ok" : "FAILED")},
            {"kernels", static_cast<int64_t>(jits[bi].captured_launches())}};
        if (problem[bi].empty()) {
          const Stats j = summarize(jit_ms[bi]), e = summarize(eager_ms[bi]);
          row["jit us"] = j.p50 * 1e3;
          row["TFLOP/s"] = flops / (j.p50 * 1e-3) / 1e12;
          row["eager us"] = e.p50 * 1e3;
          row["jit speedup"] = e.p50 / j.p50;
        }
        report.add_row(std::move(row));
      }
    }
  }
  report.print();
  report.write_json(args.get("json"));
  if (!failures.empty()) {
    throw CheckFailure(std::to_string(failures.size()) +
                       " MLP output(s) disagree with the CPU backend; first: " + failures.front());
  }
  return 0;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_tensor_mlp",
                   "An MLP forward pass through the tensor API on nv and cuda (C5).");
  parser.option("batch", "LIST", "batch sizes", "1,32,256,2048")
      .option("dims", "LIST", "layer widths, input first", "1024,4096,4096,1024")
      .option("types", "LIST", "f32, f16, bf16", "f32,f16")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("blocks", "N", "alternating timed blocks per backend", "5")
      .option("json", "PATH", "write the results as JSON");
  return bench::parse_and_run("bench_tensor_mlp", parser, argc, argv, bench::run);
}
