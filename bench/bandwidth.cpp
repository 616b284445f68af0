// C2: copy bandwidth and allocation latency through each backend.
//   host->device and device->host, pinned (Accelerator::copy on alloc_host memory:
//   the copy engine, timed with GPU time points around a batch) and pageable
//   (upload/download from ordinary memory: staged by each backend, timed on the
//   host); device->device (Accelerator::copy between device buffers; bytes read
//   plus bytes written); allocation and free latency of device memory.
// Every copy path is checked byte for byte once per size before it is timed.
// The backends alternate batch by batch; rows report the median batch.
//   bench_bandwidth [--sizes 1Mi,16Mi,256Mi,1Gi] [--alloc-sizes 1Mi,16Mi,256Mi]
//                   [--backend nv,cuda] [--json out.json]

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/args.h"
#include "support/harness.h"
#include "support/host_data.h"

namespace nvhcq::bench {
namespace {

struct Config {
  std::vector<uint64_t> sizes, alloc_sizes;
  int blocks = 5;
  int alloc_reps = 4;  // per block
};

// The buffers of one backend at one size.
struct Buffers {
  std::unique_ptr<gpu::DeviceMemory> host_src, host_dst, dev, dev2;
  void* host_src_ptr = nullptr;
  void* host_dst_ptr = nullptr;
};

enum class Test { kH2DPinned, kD2HPinned, kH2DPageable, kD2HPageable, kD2D };
const char* test_name(Test t) {
  switch (t) {
    case Test::kH2DPinned:
      return "host->device pinned";
    case Test::kD2HPinned:
      return "device->host pinned";
    case Test::kH2DPageable:
      return "host->device pageable";
    case Test::kD2HPageable:
      return "device->host pageable";
    case Test::kD2D:
      return "device->device";
  }
  return "?";
}

void check_equal(const void* got, const void* want, size_t bytes, const std::string& what) {
  if (std::memcmp(got, want, bytes) == 0) return;
  size_t i = 0;
  const auto* g = static_cast<const uint8_t*>(got);
  const auto* w = static_cast<const uint8_t*>(want);
  while (i < bytes && g[i] == w[i]) ++i;
  throw CheckFailure(what + ": byte " + std::to_string(i) + " of " + std::to_string(bytes) +
                     " differs");
}

class BandwidthBench {
 public:
  BandwidthBench(const Config& cfg, std::vector<Backend>& backends)
      : cfg_(cfg), backends_(backends) {}

  void run_size(Report& report, uint64_t size) {
    std::string label = bytes_label(size);
    // Pageable source with known contents, pageable destination (both touched).
    std::vector<uint8_t> pageable_src(size), pageable_dst(size);
    Random rng(size);
    for (size_t i = 0; i + 8 <= size; i += 8) {
      uint64_t v = rng.next();
      std::memcpy(&pageable_src[i], &v, 8);
    }
    std::vector<Buffers> bufs(backends_.size());
    for (size_t bi = 0; bi < backends_.size(); ++bi) {
      gpu::Accelerator& acc = *backends_[bi].acc;
      Buffers& b = bufs[bi];
      b.host_src = acc.alloc_host(size, &b.host_src_ptr);
      b.host_dst = acc.alloc_host(size, &b.host_dst_ptr);
      b.dev = acc.alloc(size);
      b.dev2 = acc.alloc(size);
      std::memcpy(b.host_src_ptr, pageable_src.data(), size);
      verify(acc, b, pageable_src, pageable_dst, backends_[bi].name + " " + label);
    }

    const int pinned_reps = static_cast<int>(std::clamp<uint64_t>((512ull << 20) / size, 2, 200));
    const int pageable_reps = static_cast<int>(std::clamp<uint64_t>((256ull << 20) / size, 2, 50));
    for (Test t :
         {Test::kH2DPinned, Test::kD2HPinned, Test::kH2DPageable, Test::kD2HPageable, Test::kD2D}) {
      std::vector<std::vector<double>> gbps(backends_.size());
      for (int blk = 0; blk < cfg_.blocks; ++blk) {
        for (size_t bi = 0; bi < backends_.size(); ++bi) {
          gpu::Accelerator& acc = *backends_[bi].acc;
          Buffers& b = bufs[bi];
          acc.copy(b.dev2->va(), b.dev->va(),
                   std::min<uint64_t>(size, 1 << 20));  // wake this context
          acc.synchronize();
          double seconds = 0;
          double bytes = static_cast<double>(size);
          switch (t) {
            case Test::kH2DPinned:
              seconds = gpu_ms_per_rep(acc, pinned_reps,
                                       [&] { acc.copy(b.dev->va(), b.host_src->va(), size); }) *
                        1e-3;
              break;
            case Test::kD2HPinned:
              seconds = gpu_ms_per_rep(acc, pinned_reps,
                                       [&] { acc.copy(b.host_dst->va(), b.dev->va(), size); }) *
                        1e-3;
              break;
            case Test::kD2D:
              seconds = gpu_ms_per_rep(acc, pinned_reps,
                                       [&] { acc.copy(b.dev2->va(), b.dev->va(), size); }) *
                        1e-3;
              bytes *= 2;  // read + written
              break;
            case Test::kH2DPageable: {
              double t0 = now_us();
              for (int i = 0; i < pageable_reps; ++i)
                acc.upload(*b.dev, 0, pageable_src.data(), size);
              seconds = (now_us() - t0) * 1e-6 / pageable_reps;
              break;
            }
            case Test::kD2HPageable: {
              double t0 = now_us();
              for (int i = 0; i < pageable_reps; ++i)
                acc.download(pageable_dst.data(), *b.dev, 0, size);
              seconds = (now_us() - t0) * 1e-6 / pageable_reps;
              break;
            }
          }
          gbps[bi].push_back(bytes / seconds / 1e9);
        }
      }
      for (size_t bi = 0; bi < backends_.size(); ++bi) {
        Stats st = summarize(gbps[bi]);
        report.add_row(
            {{"test", std::string(test_name(t))},
             {"size", label},
             {"bytes", static_cast<int64_t>(size)},
             {"backend", backends_[bi].name},
             {"GB/s", st.p50},
             {"min GB/s", st.min},
             {"us", static_cast<double>(size) * (t == Test::kD2D ? 2 : 1) / (st.p50 * 1e9) * 1e6}});
      }
    }
  }

  void run_alloc(Report& report, uint64_t size) {
    std::vector<std::vector<double>> alloc_us(backends_.size()), free_us(backends_.size());
    for (int blk = 0; blk < cfg_.blocks; ++blk) {
      for (size_t bi = 0; bi < backends_.size(); ++bi) {
        gpu::Accelerator& acc = *backends_[bi].acc;
        acc.synchronize();
        for (int i = 0; i < cfg_.alloc_reps; ++i) {
          double t0 = now_us();
          auto m = acc.alloc(size);
          double t1 = now_us();
          m.reset();
          double t2 = now_us();
          alloc_us[bi].push_back(t1 - t0);
          free_us[bi].push_back(t2 - t1);
        }
      }
    }
    for (size_t bi = 0; bi < backends_.size(); ++bi) {
      Stats a = summarize(alloc_us[bi]), f = summarize(free_us[bi]);
      report.add_row({{"test", std::string("allocate")},
                      {"size", bytes_label(size)},
                      {"bytes", static_cast<int64_t>(size)},
                      {"backend", backends_[bi].name},
                      {"us", a.p50},
                      {"p99 us", a.p99}});
      report.add_row({{"test", std::string("free")},
                      {"size", bytes_label(size)},
                      {"bytes", static_cast<int64_t>(size)},
                      {"backend", backends_[bi].name},
                      {"us", f.p50},
                      {"p99 us", f.p99}});
    }
  }

 private:
  // Every path once, byte for byte: pinned up and down, device to device, pageable up and down.
  void verify(gpu::Accelerator& acc, Buffers& b, const std::vector<uint8_t>& src,
              std::vector<uint8_t>& dst, const std::string& what) {
    const size_t size = src.size();
    std::memset(b.host_dst_ptr, 0xa5, size);
    acc.copy(b.dev->va(), b.host_src->va(), size);
    acc.copy(b.dev2->va(), b.dev->va(), size);
    acc.copy(b.host_dst->va(), b.dev2->va(), size);
    acc.synchronize();
    check_equal(b.host_dst_ptr, src.data(), size, what + ": pinned host->device->device->host");
    std::vector<uint8_t> zeros(size, 0x5a);
    acc.upload(*b.dev, 0, zeros.data(), size);  // overwrite, then the pageable round trip
    acc.upload(*b.dev, 0, src.data(), size);
    std::fill(dst.begin(), dst.end(), 0xc3);
    acc.download(dst.data(), *b.dev, 0, size);
    check_equal(dst.data(), src.data(), size, what + ": pageable upload/download");
  }

  const Config& cfg_;
  std::vector<Backend>& backends_;
};

int run(const ArgParser::Result& args) {
  Config cfg;
  cfg.sizes = parse_count_list(args.get("sizes"));
  cfg.alloc_sizes = parse_count_list(args.get("alloc-sizes"));
  cfg.blocks = static_cast<int>(std::max(1LL, args.get_int("blocks")));
  auto backends = open_backends(args.get("backend"));
  Report report("copy bandwidth and allocation (C2)",
                {"test", "size", "backend", "GB/s", "min GB/s", "us", "p99 us"});
  describe(report, backends);
  report.set_meta(
      "timing",
      "pinned and device copies: GPU time points around a batch; pageable and allocation: "
      "host clock; median of " +
          std::to_string(cfg.blocks) + " alternating batches");
  report.set_meta("device->device bytes", "read + written (2x the size)");
  BandwidthBench bench(cfg, backends);
  std::vector<std::string> problems;
  for (uint64_t s : cfg.sizes) {
    run_part("copies of " + bytes_label(s), problems, [&] { bench.run_size(report, s); });
  }
  for (uint64_t s : cfg.alloc_sizes) {
    run_part("allocation of " + bytes_label(s), problems, [&] { bench.run_alloc(report, s); });
  }
  report.print();
  report.write_json(args.get("json"));
  fail_if_problems(problems, "measurement(s)");
  return 0;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_bandwidth",
                   "Copy bandwidth and allocation latency through nv and cuda (C2).");
  parser.option("sizes", "LIST", "copy sizes (suffixes Ki, Mi, Gi)", "1Mi,16Mi,256Mi,1Gi")
      .option("alloc-sizes", "LIST", "allocation sizes", "1Mi,16Mi,256Mi")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("blocks", "N", "alternating timed batches per backend", "5")
      .option("json", "PATH", "write the results as JSON");
  return bench::parse_and_run("bench_bandwidth", parser, argc, argv, bench::run);
}
