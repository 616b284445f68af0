#include "app/bench_table.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace nvhcq::app {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string size_text(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

std::string params_text(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f B", static_cast<double>(n) / 1e9);
  return buf;
}

void print_timeline(const BenchSetup& s) {
  std::printf("\nwhere a self-ordered decode step goes (%s, %s; the blocks' own stamps, kernels built to trace, %d "
              "positions in the cache). A launch's share runs from the end of the launches ahead (ready) to the end "
              "of its last block, the critical one; per launch, µs:\n\n",
              s.model.c_str(), s.backend.c_str(), s.profile_positions);
  std::printf("| kernel class | launches | share per token | share | critical block: wait | preparation | work | "
              "first block's wake-up | last block's start | median block's work |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const llm::TimelineClass& c : s.timeline.classes) {
    std::printf("| %s | %d | %.1f | %.1f%% | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", c.what.c_str(), c.launches,
                c.share, s.timeline.step > 0 ? 100.0 * c.share / s.timeline.step : 0.0, c.wait, c.prepare, c.work,
                c.wake, c.late, c.median_work);
  }
  std::printf("| whole step | | %.1f | | | | | | | |\n\n", s.timeline.step);
  std::fflush(stdout);
}

}  // namespace

double BenchRow::mean_tps() const {
  if (seconds.empty()) return 0.0;
  double s = 0.0;
  for (double t : seconds) s += tokens / t;
  return s / static_cast<double>(seconds.size());
}

double BenchRow::sd_tps() const {
  if (seconds.size() < 2) return 0.0;
  const double m = mean_tps();
  double s = 0.0;
  for (double t : seconds) s += (tokens / t - m) * (tokens / t - m);
  return std::sqrt(s / static_cast<double>(seconds.size() - 1));
}

void print_bench_table(const std::vector<BenchRow>& rows) {
  std::printf("| model | size | params | backend | test | t/s | GB/s (of copy) |\n");
  std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: |\n");
  for (const BenchRow& r : rows) {
    std::string bw = "";
    if (r.bytes_per_token > 0) {
      const double gbs = r.mean_tps() * static_cast<double>(r.bytes_per_token) / 1e9;
      char buf[64];
      if (r.copy_bandwidth > 0) {
        // A copy moves each byte twice (read and write); weights are only read.
        std::snprintf(buf, sizeof(buf), "%.0f (%.0f%%)", gbs, 100.0 * gbs * 1e9 / r.copy_bandwidth);
      } else {
        std::snprintf(buf, sizeof(buf), "%.0f", gbs);
      }
      bw = buf;
    }
    std::printf("| %s | %s | %s | %s | %s | %.2f ± %.2f | %s |\n", r.model.c_str(), size_text(r.model_bytes).c_str(),
                params_text(r.params).c_str(), r.backend.c_str(), r.test.c_str(), r.mean_tps(), r.sd_tps(),
                bw.c_str());
  }
  std::fflush(stdout);
}

void print_bench_setup(const BenchSetup& s) {
  std::fprintf(stderr, "%s on %s (%s): loaded in %.2f s", s.model.c_str(), s.backend.c_str(), s.device.c_str(),
               s.load_seconds);
  if (s.device_bytes > 0) {
    const double budget = static_cast<double>(s.weight_bytes + s.kv_bytes);
    std::fprintf(stderr, "; GPU memory %.1f MiB = weights %.1f + KV cache %.1f %+.1f%%; %zu launches per token (%s)",
                 s.device_bytes / 1048576.0, s.weight_bytes / 1048576.0, s.kv_bytes / 1048576.0,
                 100.0 * (static_cast<double>(s.device_bytes) / budget - 1.0), s.step_launches, s.decode.c_str());
  }
  if (s.copy_bandwidth > 0) std::fprintf(stderr, "; device copy %.0f GB/s", s.copy_bandwidth / 1e9);
  std::fprintf(stderr, "\n");
  if (!s.profile.empty()) {
    double total = 0.0;
    for (const ProfileEntry& p : s.profile) total += p.microseconds;
    const bool phases = s.decode == "persistent";
    std::printf("\nper-token decode time by kernel class (%s, %s; %s, %d positions in the cache):\n\n",
                s.model.c_str(), s.backend.c_str(),
                phases ? "the persistent step's phases, each up to the grid barrier that ends it"
                       : "each launch timed on its own",
                s.profile_positions);
    std::printf("| kernel class | %s | µs per token | share |\n| --- | ---: | ---: | ---: |\n",
                phases ? "phases" : "launches");
    for (const ProfileEntry& p : s.profile) {
      std::printf("| %s | %d | %.1f | %.1f%% |\n", p.what.c_str(), p.launches, p.microseconds,
                  total > 0 ? 100.0 * p.microseconds / total : 0.0);
    }
    std::printf("| total | | %.1f | |\n", total);
    if (s.step_us > 0 && !phases) {
      std::printf("| gaps between launches, overlap if negative (a replayed step takes %.1f) | | %.1f | |\n", s.step_us,
                  s.step_us - total);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (!s.timeline.classes.empty()) print_timeline(s);
  if (!s.prefill_profile.empty()) {
    double total = 0.0;
    for (const ProfileEntry& p : s.prefill_profile) total += p.microseconds;
    std::printf("prefill of %d tokens by kernel class (%s, %s; launches timed one after another):\n\n",
                s.prefill_tokens, s.model.c_str(), s.backend.c_str());
    std::printf("| kernel class | launches | µs | share |\n| --- | ---: | ---: | ---: |\n");
    for (const ProfileEntry& p : s.prefill_profile) {
      std::printf("| %s | %d | %.1f | %.1f%% |\n", p.what.c_str(), p.launches, p.microseconds,
                  total > 0 ? 100.0 * p.microseconds / total : 0.0);
    }
    std::printf("| total | | %.1f | |\n\n", total);
    std::fflush(stdout);
  }
}

void write_bench_json(const std::string& path, const std::vector<BenchRow>& rows,
                      const std::vector<BenchSetup>& setups) {
  if (path.empty()) return;
  std::ostringstream o;
  o << "{\n  \"benchmark\": \"nvhcq bench\",\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    o << "    {\"model\": " << json_string(r.model) << ", \"file\": " << json_string(r.file)
      << ", \"size_bytes\": " << r.model_bytes << ", \"params\": " << r.params
      << ", \"backend\": " << json_string(r.backend) << ", \"test\": " << json_string(r.test)
      << ", \"tokens\": " << r.tokens << ", \"tps_mean\": " << number(r.mean_tps())
      << ", \"tps_sd\": " << number(r.sd_tps()) << ", \"seconds\": [";
    for (size_t k = 0; k < r.seconds.size(); ++k) o << (k ? ", " : "") << number(r.seconds[k]);
    o << "], \"bytes_per_token\": " << r.bytes_per_token << ", \"copy_bandwidth\": " << number(r.copy_bandwidth)
      << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  o << "  ],\n  \"setups\": [\n";
  for (size_t i = 0; i < setups.size(); ++i) {
    const BenchSetup& s = setups[i];
    o << "    {\"model\": " << json_string(s.model) << ", \"backend\": " << json_string(s.backend)
      << ", \"device\": " << json_string(s.device) << ", \"load_seconds\": " << number(s.load_seconds)
      << ", \"weight_bytes\": " << s.weight_bytes << ", \"kv_cache_bytes\": " << s.kv_bytes
      << ", \"device_bytes\": " << s.device_bytes << ", \"host_peak_rss\": " << s.host_peak_rss
      << ", \"copy_bandwidth\": " << number(s.copy_bandwidth) << ", \"launches_per_token\": " << s.step_launches
      << ", \"decode\": " << json_string(s.decode) << ", \"prefill_tokens\": " << s.prefill_tokens << ", \"prefill_profile\": [";
    for (size_t k = 0; k < s.prefill_profile.size(); ++k) {
      o << (k ? ", " : "") << "{\"what\": " << json_string(s.prefill_profile[k].what)
        << ", \"launches\": " << s.prefill_profile[k].launches
        << ", \"us\": " << number(s.prefill_profile[k].microseconds) << "}";
    }
    o << "], \"profile\": [";
    for (size_t k = 0; k < s.profile.size(); ++k) {
      o << (k ? ", " : "") << "{\"what\": " << json_string(s.profile[k].what)
        << ", \"launches\": " << s.profile[k].launches << ", \"us_per_token\": " << number(s.profile[k].microseconds)
        << "}";
    }
    o << "], \"timeline\": {\"step_us\": " << number(s.timeline.step) << ", \"classes\": [";
    for (size_t k = 0; k < s.timeline.classes.size(); ++k) {
      const llm::TimelineClass& c = s.timeline.classes[k];
      o << (k ? ", " : "") << "{\"what\": " << json_string(c.what) << ", \"launches\": " << c.launches
        << ", \"share_us\": " << number(c.share) << ", \"critical_wait_us\": " << number(c.wait)
        << ", \"critical_prepare_us\": " << number(c.prepare) << ", \"critical_work_us\": " << number(c.work)
        << ", \"wake_us\": " << number(c.wake) << ", \"last_start_us\": " << number(c.late)
        << ", \"median_work_us\": " << number(c.median_work) << "}";
    }
    o << "]}}" << (i + 1 < setups.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  f << o.str();
  if (!f) throw Error("writing " + path + " failed");
}

}  // namespace nvhcq::app
