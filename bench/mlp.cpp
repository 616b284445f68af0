// C5: a small MLP, 784-256-128-10 (relu, relu, linear), f32 and f16, batch 1
// and 256, through nv and cuda: the latency of one forward pass as the host sees
// it (six launches -- three GEMMs, three bias(+relu) kernels -- then a
// synchronize), p50/p99, and samples/s at that latency. Two ways to issue it:
// "stream" (the six launches each time) and "graph" (recorded once, replayed).
// The output is checked against a float64 CPU forward pass (f16: the stored
// weights and activations are f16) for both ways before timing. The backends
// alternate in blocks; the first samples after a switch are dropped (the GPU
// changes context).
//   bench_mlp [--types f32,f16] [--batches 1,256] [--iters 1000] [--backend nv,cuda] [--json
//   out.json]

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/args.h"
#include "support/harness.h"
#include "support/host_data.h"

namespace nvhcq::bench {
namespace {

using kernels::GemmType;

constexpr uint32_t kWidths[4] = {784, 256, 128, 10};

struct Config {
  std::vector<GemmType> types;
  std::vector<uint64_t> batches;
  int iters = 1000;
  int blocks = 10;
  int settle = 20;
};

// Host weights (exact values of `type`) and a float64 forward pass over them.
struct HostModel {
  GemmType type;
  uint32_t batch;
  HostTensor x;
  HostTensor w[3], b[3];

  HostModel(GemmType t, uint32_t batch_size) : type(t), batch(batch_size) {
    x = random_tensor(t, size_t{batch} * kWidths[0], 11 + batch, 0.0f, 1.0f);
    for (int l = 0; l < 3; ++l) {
      float scale = 1.0f / std::sqrt(static_cast<float>(kWidths[l]));
      w[l] = random_tensor(t, size_t{kWidths[l]} * kWidths[l + 1], 100 + l, -scale, scale);
      b[l] = random_tensor(t, kWidths[l + 1], 200 + l, -0.1f, 0.1f);
    }
  }

  // What the GPU should produce: activations rounded to `type` after each layer,
  // as the kernels store them.
  std::vector<double> forward() const {
    std::vector<double> act(x.values.begin(), x.values.end());
    for (int l = 0; l < 3; ++l) {
      const uint32_t in = kWidths[l], out = kWidths[l + 1];
      std::vector<double> next(size_t{batch} * out, 0.0);
      for (uint32_t r = 0; r < batch; ++r) {
        for (uint32_t k = 0; k < in; ++k) {
          double a = act[size_t{r} * in + k];
          for (uint32_t c = 0; c < out; ++c)
            next[size_t{r} * out + c] += a * w[l].values[size_t{k} * out + c];
        }
      }
      std::vector<float> stored(next.size());
      for (size_t i = 0; i < next.size(); ++i) {
        // The GEMM stores x*W in `type`; the bias kernel adds in f32 and stores again.
        float g = round_to_type(static_cast<float>(next[i]));
        float v = g + b[l].values[i % out];
        if (l < 2 && v < 0) v = 0;
        stored[i] = round_to_type(v);
      }
      act.assign(stored.begin(), stored.end());
    }
    return act;
  }

 private:
  float round_to_type(float v) const {
    if (type == GemmType::kF32) return v;
    return decode(type, encode(type, {v}), 1)[0];
  }
};

// One backend's copy of the model and its six launches.
class DeviceModel {
 public:
  DeviceModel(gpu::Accelerator& acc, KernelLoader& loader, const HostModel& m)
      : acc_(acc), batch_(m.batch) {
    const size_t es = kernels::gemm_element_bytes(m.type);
    auto upload = [&](const HostTensor& t) {
      auto mem = acc.alloc(t.bytes.size());
      acc.upload(*mem, 0, t.bytes.data(), t.bytes.size());
      return mem;
    };
    x_ = upload(m.x);
    for (int l = 0; l < 3; ++l) {
      w_[l] = upload(m.w[l]);
      b_[l] = upload(m.b[l]);
      act_[l] = acc.alloc(size_t{batch_} * kWidths[l + 1] * es);
      gemm_plan_[l] = kernels::plan_gemm(
          kernels::GemmProblem{m.type, batch_, kWidths[l + 1], kWidths[l], true}, acc.sm_count());
      bias_plan_[l] = kernels::plan_bias_act(m.type, batch_, kWidths[l + 1], acc.sm_count());
      gemm_[l] = &loader.get(acc, gemm_plan_[l]);
      bias_[l] = &loader.get(acc, bias_plan_[l]);
    }
  }

  void issue_forward() {
    for (int l = 0; l < 3; ++l) {
      uint64_t in = l == 0 ? x_->va() : act_[l - 1]->va();
      gpu::KernelArgs g;
      g.ptr(act_[l]->va()).ptr(in).ptr(w_[l]->va());
      g.add(static_cast<int32_t>(batch_))
          .add(static_cast<int32_t>(kWidths[l + 1]))
          .add(static_cast<int32_t>(kWidths[l]));
      acc_.launch(*gemm_[l], g, dims_of(gemm_plan_[l]));
      gpu::KernelArgs b;
      b.ptr(act_[l]->va())
          .ptr(b_[l]->va())
          .add(batch_)
          .add(kWidths[l + 1])
          .add(static_cast<uint32_t>(l < 2 ? 1 : 0));
      acc_.launch(*bias_[l], b, dims_of(bias_plan_[l]));
    }
  }

  void capture() {
    acc_.begin_capture();
    issue_forward();
    graph_ = acc_.end_capture();
  }
  void replay() { acc_.replay(*graph_); }

  std::vector<uint8_t> output() {
    std::vector<uint8_t> out(act_[2]->size());
    acc_.download(out.data(), *act_[2], 0, out.size());
    return out;
  }
  void poison_output() {
    std::vector<uint8_t> p(act_[2]->size(), 0xff);
    acc_.upload(*act_[2], 0, p.data(), p.size());
  }
  std::string kernels_used() const {
    std::string s;
    for (int l = 0; l < 3; ++l) s += (l ? ", " : "") + gemm_plan_[l].variant;
    return s;
  }

 private:
  gpu::Accelerator& acc_;
  uint32_t batch_;
  std::unique_ptr<gpu::DeviceMemory> x_, w_[3], b_[3], act_[3];
  kernels::KernelLaunch gemm_plan_[3], bias_plan_[3];
  const gpu::Kernel* gemm_[3] = {nullptr, nullptr, nullptr};
  const gpu::Kernel* bias_[3] = {nullptr, nullptr, nullptr};
  std::unique_ptr<gpu::Graph> graph_;
};

double rel_error(const std::vector<float>& got, const std::vector<double>& ref,
                 size_t* non_finite) {
  double num = 0, den = 0;
  *non_finite = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++*non_finite;
      continue;
    }
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

int run(const ArgParser::Result& args) {
  Config cfg;
  for (const auto& s : split_list(args.get("types"))) {
    GemmType t = kernels::parse_gemm_type(s);
    if (t == GemmType::kBF16) throw UsageError("MLP types are f32 and f16");
    cfg.types.push_back(t);
  }
  cfg.batches = parse_count_list(args.get("batches"));
  cfg.iters = static_cast<int>(std::max(10LL, args.get_int("iters")));
  auto backends = open_backends(args.get("backend"));
  Report report("MLP 784-256-128-10 (C5)",
                {"type", "batch", "backend", "mode", "check", "p50 us", "p99 us", "samples/s"});
  describe(report, backends);
  report.set_meta("forward",
                  "3 GEMMs + 3 bias(+relu) kernels, then synchronize; latency on the host clock");
  KernelLoader loader;
  std::vector<std::string> failures;

  std::vector<std::string> problems;
  for (GemmType type : cfg.types) {
    for (uint64_t batch64 : cfg.batches) {
      const uint32_t batch = static_cast<uint32_t>(batch64);
      std::string what =
          std::string(kernels::gemm_type_name(type)) + " batch " + std::to_string(batch);
      run_part(what, problems, [&] {
        HostModel host(type, batch);
        std::vector<double> ref = host.forward();
        const double tol = type == GemmType::kF32 ? 1e-5 : 1e-2;
        std::vector<std::unique_ptr<DeviceModel>> models;
        std::vector<bool> failed(backends.size(), false);
        for (size_t bi = 0; bi < backends.size(); ++bi) {
          models.push_back(std::make_unique<DeviceModel>(*backends[bi].acc, loader, host));
          models[bi]->capture();
          for (const char* mode : {"stream", "graph"}) {
            models[bi]->poison_output();
            if (std::string(mode) == "stream") {
              models[bi]->issue_forward();
            } else {
              models[bi]->replay();
            }
            backends[bi].acc->synchronize();
            size_t bad = 0;
            double err = rel_error(decode(type, models[bi]->output(), ref.size()), ref, &bad);
            if (bad > 0 || err > tol) {
              failed[bi] = true;
              failures.push_back(std::string(kernels::gemm_type_name(type)) + " batch " +
                                 std::to_string(batch) + " on " + backends[bi].name + " (" + mode +
                                 "): relative error " + std::to_string(err) +
                                 (bad ? ", " + std::to_string(bad) + " NaN/inf" : "") +
                                 ", tolerance " + std::to_string(tol));
              std::fprintf(stderr, "bench_mlp: CHECK FAILED: %s\n", failures.back().c_str());
            }
          }
        }
        report.set_meta(std::string("kernels ") + kernels::gemm_type_name(type) + " batch " +
                            std::to_string(batch),
                        models.front()->kernels_used());

        for (const char* mode : {"stream", "graph"}) {
          const bool graph = std::string(mode) == "graph";
          std::vector<std::vector<double>> us(backends.size());
          const int per_block = std::max(1, cfg.iters / cfg.blocks);
          for (int blk = 0; blk < cfg.blocks; ++blk) {
            for (size_t bi = 0; bi < backends.size(); ++bi) {
              if (failed[bi]) continue;
              for (int i = 0; i < per_block + cfg.settle; ++i) {
                double t0 = now_us();
                if (graph) {
                  models[bi]->replay();
                } else {
                  models[bi]->issue_forward();
                }
                backends[bi].acc->synchronize();
                double t = now_us() - t0;
                if (i >= cfg.settle) us[bi].push_back(t);
              }
            }
          }
          for (size_t bi = 0; bi < backends.size(); ++bi) {
            std::map<std::string, Value> row{{"type", std::string(kernels::gemm_type_name(type))},
                                             {"batch", static_cast<int64_t>(batch)},
                                             {"backend", backends[bi].name},
                                             {"mode", std::string(mode)},
                                             {"check", std::string(failed[bi] ? "FAILED" : "ok")}};
            if (!failed[bi]) {
              Stats st = summarize(us[bi]);
              row["p50 us"] = st.p50;
              row["p99 us"] = st.p99;
              row["samples/s"] = batch / (st.p50 * 1e-6);
            }
            report.add_row(std::move(row));
          }
        }
      });
    }
  }
  report.print();
  report.write_json(args.get("json"));
  fail_if_problems(problems, "configuration(s)");
  if (!failures.empty()) {
    throw CheckFailure(
        std::to_string(failures.size()) +
        " forward pass(es) disagree with the CPU reference; first: " + failures.front());
  }
  return 0;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_mlp", "MLP 784-256-128-10 forward latency through nv and cuda (C5).");
  parser.option("types", "LIST", "f32, f16", "f32,f16")
      .option("batches", "LIST", "batch sizes", "1,256")
      .option("iters", "N", "timed forward passes per backend and mode", "1000")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("json", "PATH", "write the results as JSON");
  return bench::parse_and_run("bench_mlp", parser, argc, argv, bench::run);
}
