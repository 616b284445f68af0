// Where the time of a launch goes, measured with the GPU's own timestamps:
//  - CPU issue cost of one submission versus its GPU cost,
//  - the GPU time between two consecutive submissions (fetch + launch + idle wait),
//  - chained launches (one submission) with QMD variants (membar, cache
//    invalidation, dependent-QMD prefetch),
//  - variants of the launch encoding (SEND_SIGNALING_PCAS2_B action, semaphore
//    release with and without timestamp, QMD-release signalling).
// Findings are kept in docs/perf-notes.md.
// A tool for choosing the launch path; bench_launch is the headline benchmark.
//   bench_launch_breakdown [--n 2000] [--json out.json]

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/args.h"
#include "base/error.h"
#include "gpu/device.h"
#include "gpu/hw/methods.h"
#include "gpu/program.h"
#include "gpu/queue.h"
#include "support/report.h"

namespace nvhcq::bench {
namespace {

using gpu::PushBuffer;
namespace hw = gpu::hw;

struct Variant {
  std::string name;
  uint32_t pcas_action;
  bool release_timestamp;
  bool qmd_release;  // signal through the QMD's release semaphore, not the pushbuffer
};

struct QmdTweak {
  std::string name;
  uint32_t membar = hw::kCwdMembarTypeL1Sysmembar;  // CWD_MEMBAR_TYPE
  bool invalidate_caches = true;                     // the L1/texture/constant invalidates
  bool prefetch_dependent = true;
};

// Writes one launch of `p` (no arguments) into the argument ring; returns the QMD's VA.
uint64_t write_launch(gpu::Device& dev, const gpu::Program& p, uint64_t release_va,
                      uint64_t release_value, const QmdTweak* tweak = nullptr,
                      uint8_t** qmd_cpu = nullptr) {
  const auto& arch = dev.arch();
  uint32_t cbuf = p.cbuf0_bytes();
  uint32_t cbuf_span = (cbuf + 255) / 256 * 256;
  auto span = dev.kernargs().alloc(cbuf_span + arch.qmd->size_bytes, 256);
  std::vector<uint8_t> bank(cbuf, 0);
  uint32_t one = 1;
  for (int i = 0; i < 3; ++i) {
    std::memcpy(bank.data() + arch.cbuf0_block_dim + 4 * i, &one, 4);
    std::memcpy(bank.data() + arch.cbuf0_grid_dim + 4 * i, &one, 4);
  }
  std::memcpy(bank.data() + arch.cbuf0_stack_top, &arch.stack_top_value, 4);
  std::memcpy(span.cpu, bank.data(), bank.size());
  gpu::Qmd q = p.qmd_template();
  q.set_grid(1, 1, 1);
  q.set_block(1, 1, 1);
  q.set(q.layout().shared_memory_size, p.shared_bytes(gpu::LaunchDims{}));
  q.set(q.layout().min_sm_config_shared_mem_size, 3);
  q.set(q.layout().target_sm_config_shared_mem_size, 3);
  q.set(q.layout().max_sm_config_shared_mem_size, arch.shared_configs_kib.back() / 4 + 1);
  q.set(q.layout().shader_local_memory_high_size, dev.local_memory_per_thread());
  q.set_constant_buffer(0, span.va, cbuf);
  if (release_va != 0) q.set_release(release_va, release_value);
  if (tweak != nullptr) {
    const auto& l = q.layout();
    q.set(l.cwd_membar_type, tweak->membar);
    uint32_t inv = tweak->invalidate_caches ? 1 : 0;
    q.set(l.invalidate_texture_header_cache, inv);
    q.set(l.invalidate_texture_sampler_cache, inv);
    q.set(l.invalidate_texture_data_cache, inv);
    q.set(l.invalidate_shader_data_cache, inv);
    q.set(l.invalidate_shader_constant_cache, inv);
  }
  std::memcpy(span.cpu + cbuf_span, q.data(), q.size());
  if (qmd_cpu != nullptr) *qmd_cpu = span.cpu + cbuf_span;
  return span.va + cbuf_span;
}

void timestamp_release(PushBuffer& pb, uint64_t va, bool wfi) {
  pb.method(hw::kSubchHost, hw::host::SEM_ADDR_LO,
            {PushBuffer::lo(va), PushBuffer::hi(va), 0, 0,
             hw::host::SEM_EXECUTE_OPERATION_RELEASE | (wfi ? hw::host::SEM_EXECUTE_RELEASE_WFI : 0) |
                 hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT | hw::host::SEM_EXECUTE_RELEASE_TIMESTAMP});
}

void run(int n, Report& report) {
  auto dev = gpu::Device::open(0);
  gpu::Program empty = gpu::Program::embedded(*dev, "selftest.cu", "empty_kernel");
  gpu::Signal s = dev->new_signal(0);
  uint64_t v = 0;

  // 1. CPU issue cost vs total for back-to-back single-launch submissions.
  {
    for (int i = 0; i < 100; ++i) gpu::ComputeQueue().exec(empty, gpu::KernelArgs(), gpu::LaunchDims{}).submit(*dev);
    dev->synchronize();
    double t0 = now_us();
    for (int i = 0; i < n; ++i) gpu::ComputeQueue().exec(empty, gpu::KernelArgs(), gpu::LaunchDims{}).submit(*dev);
    double issued = now_us();
    dev->synchronize();
    double done = now_us();
    report.add_row({{"measure", std::string("submission per launch: CPU issue")}, {"us", (issued - t0) / n}});
    report.add_row({{"measure", std::string("submission per launch: total")}, {"us", (done - t0) / n}});
  }

  // 1b. The same at growing counts: the rings (GPFIFO, command, argument) wrap.
  for (int count : {1000, 4000, 12000, 20000, 40000}) {
    double t0 = now_us();
    for (int i = 0; i < count; ++i) gpu::ComputeQueue().exec(empty, gpu::KernelArgs(), gpu::LaunchDims{}).submit(*dev);
    double issued = now_us();
    dev->synchronize();
    double done = now_us();
    report.add_row({{"measure", "submission per launch x" + std::to_string(count) + ": CPU issue / total"},
                    {"us", (issued - t0) / count}, {"min us", (done - t0) / count}});
  }

  // 2. GPU timeline of submissions: start stamp, launch, end stamp (WFI).
  {
    std::vector<gpu::Signal> a, b;
    for (int i = 0; i < 200; ++i) {
      a.push_back(dev->new_signal(0));
      b.push_back(dev->new_signal(0));
    }
    for (int i = 0; i < 200; ++i) {
      PushBuffer pb;
      timestamp_release(pb, a[i].va(), false);
      uint64_t qmd = write_launch(*dev, empty, 0, 0);
      pb.method(hw::kSubchCompute, hw::compute::SEND_PCAS_A, {static_cast<uint32_t>(qmd >> 8)});
      pb.method(hw::kSubchCompute, hw::compute::SEND_SIGNALING_PCAS2_B,
                {hw::compute::PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE});
      timestamp_release(pb, b[i].va(), true);
      dev->submit(drv::Engine::kCompute, pb);
    }
    dev->synchronize();
    std::vector<double> kernel, gap;
    for (int i = 10; i < 200; ++i) {
      kernel.push_back((b[i].timestamp() - a[i].timestamp()) / 1000.0);
      gap.push_back((a[i].timestamp() - b[i - 1].timestamp()) / 1000.0);
    }
    Stats k = summarize(kernel), g = summarize(gap);
    report.add_row({{"measure", std::string("GPU: start stamp -> launch done (WFI)")}, {"us", k.p50}, {"min us", k.min}});
    report.add_row({{"measure", std::string("GPU: end of one submission -> start of next")}, {"us", g.p50}, {"min us", g.min}});
  }

  // 3. Chained launches (one submission) by QMD variant: GPU time per launch.
  {
    std::vector<QmdTweak> tweaks = {
        {"sysmembar + invalidates (current)", hw::kCwdMembarTypeL1Sysmembar, true, true},
        {"L1 membar + invalidates", 3, true, true},
        {"L1 membar, no invalidates", 3, false, true},
        {"no membar, no invalidates", 0, false, true},
        {"L1 membar, no invalidates, no dependent prefetch", 3, false, false},
        {"sysmembar, no invalidates", hw::kCwdMembarTypeL1Sysmembar, false, true},
    };
    const int chain = 1000;
    gpu::Signal a = dev->new_signal(0), b = dev->new_signal(0);
    for (int rep = 0; rep < 2; ++rep) {
      for (const auto& t : tweaks) {
        PushBuffer pb;
        timestamp_release(pb, a.va(), true);
        uint8_t* prev_cpu = nullptr;
        gpu::Qmd prev(*dev->arch().qmd);
        for (int i = 0; i < chain; ++i) {
          uint8_t* cpu = nullptr;
          uint64_t qmd = write_launch(*dev, empty, 0, 0, &t, &cpu);
          if (prev_cpu == nullptr) {
            pb.method(hw::kSubchCompute, hw::compute::SEND_PCAS_A, {static_cast<uint32_t>(qmd >> 8)});
            pb.method(hw::kSubchCompute, hw::compute::SEND_SIGNALING_PCAS2_B,
                      {hw::compute::PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE});
          } else {
            gpu::write_bits(prev_cpu, prev.layout().dependent_qmd0_pointer, qmd >> 8);
            gpu::write_bits(prev_cpu, prev.layout().dependent_qmd0_action, hw::kDependentQmdActionSchedule);
            gpu::write_bits(prev_cpu, prev.layout().dependent_qmd0_prefetch, t.prefetch_dependent ? 1 : 0);
            gpu::write_bits(prev_cpu, prev.layout().dependent_qmd0_enable, 1);
          }
          prev_cpu = cpu;
        }
        timestamp_release(pb, b.va(), true);
        dev->submit(drv::Engine::kCompute, pb);
        dev->synchronize();
        double per = (b.timestamp() - a.timestamp()) / 1000.0 / chain;
        report.add_row({{"measure", "chained x" + std::to_string(chain) + ": " + t.name + (rep ? " (again)" : "")},
                        {"us", per}});
      }
    }
  }

  // 4. Round trip by variant.
  std::vector<Variant> variants = {
      {"pushbuffer release+WFI+timestamp, PCAS 0xa", 0x0a, true, false},
      {"pushbuffer release+WFI, no timestamp, PCAS 0xa", 0x0a, false, false},
      {"pushbuffer release+WFI, PCAS 0x2 (schedule)", 0x02, false, false},
      {"pushbuffer release+WFI, PCAS 0x9 (prefetch+schedule)", 0x09, false, false},
      {"pushbuffer release+WFI, PCAS 0x3 (invalidate copy schedule)", 0x03, false, false},
      {"QMD release semaphore, PCAS 0xa", 0x0a, false, true},
  };
  for (int rep = 0; rep < 2; ++rep) {
    for (const auto& var : variants) {
      std::vector<double> samples;
      for (int i = 0; i < n / 4 + 50; ++i) {
        double t0 = now_us();
        PushBuffer pb;
        ++v;
        uint64_t qmd = write_launch(*dev, empty, var.qmd_release ? s.va() : 0, v);
        pb.method(hw::kSubchCompute, hw::compute::SEND_PCAS_A, {static_cast<uint32_t>(qmd >> 8)});
        pb.method(hw::kSubchCompute, hw::compute::SEND_SIGNALING_PCAS2_B, {var.pcas_action});
        if (!var.qmd_release) {
          pb.method(hw::kSubchHost, hw::host::SEM_ADDR_LO,
                    {PushBuffer::lo(s.va()), PushBuffer::hi(s.va()), PushBuffer::lo(v), PushBuffer::hi(v),
                     hw::host::SEM_EXECUTE_OPERATION_RELEASE | hw::host::SEM_EXECUTE_RELEASE_WFI |
                         hw::host::SEM_EXECUTE_PAYLOAD_SIZE_64BIT |
                         (var.release_timestamp ? hw::host::SEM_EXECUTE_RELEASE_TIMESTAMP : 0)});
        }
        dev->submit(drv::Engine::kCompute, pb);
        dev->wait(s, v);
        if (i >= 50) samples.push_back(now_us() - t0);
      }
      Stats st = summarize(samples);
      report.add_row({{"measure", "round trip: " + var.name + (rep ? " (again)" : "")},
                      {"us", st.p50}, {"min us", st.min}, {"p99 us", st.p99}});
    }
  }
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser("bench_launch_breakdown", "Where the time of a kernel launch goes (GPU timestamps).");
  parser.option("n", "N", "submissions per measurement", "2000").option("json", "PATH", "write JSON");
  try {
    auto args = parser.parse(std::vector<std::string>(argv + 1, argv + argc));
    if (args.help_requested()) {
      std::printf("%s", parser.usage().c_str());
      return 0;
    }
    bench::Report report("launch breakdown (empty kernel)", {"measure", "us", "min us", "p99 us"});
    bench::run(static_cast<int>(args.get_int("n")), report);
    report.print();
    report.write_json(args.get("json"));
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_launch_breakdown: %s\n", e.what());
    return 1;
  }
}
