#include "support/compare_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "base/error.h"

namespace nvhcq::bench {
namespace {

const char* kBenchmarks[] = {"matmul", "bandwidth", "launch", "elementwise", "mlp"};

std::string cell(double v) {
  return std::isnan(v) ? "—" : format_number(v);
}
std::string ratio_cell(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || b == 0) return "—";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f×", a / b);
  return buf;
}

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  std::string render() const {
    std::ostringstream o;
    o << "|";
    for (const auto& h : headers_) o << " " << h << " |";
    o << "\n|";
    // Labels left, numbers right.
    static const std::set<std::string> kText = {
        "size",   "test",     "op",   "type",   "elements", "mode",  "measure",
        "target", "measured", "goal", "status", "kernels",  "batch", "backend"};
    for (const auto& h : headers_) o << (kText.count(h) ? "---|" : "---:|");
    o << "\n";
    for (const auto& r : rows_) {
      o << "|";
      for (const auto& c : r) o << " " << c << " |";
      o << "\n";
    }
    return o.str() + "\n";
  }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// nvhcq's kernel families in a matmul result for `type` ("mma", "wgmma", "simt";
// "" for results written before families were recorded).
std::vector<std::string> matmul_families(const Json& doc, const std::string& type) {
  std::vector<std::string> out;
  for (const Json* r : rows_where(doc, {{"type", type}})) {
    if (text_of(*r, "backend") == "cublas") continue;
    std::string f = text_of(*r, "family");
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

// The best TFLOP/s of nvhcq's kernels on `backend` at (type, size), over families.
double best_nvhcq(const Json& doc, const std::string& type, const std::string& size,
                  const std::string& backend) {
  double best = std::nan("");
  for (const Json* r : rows_where(doc, {{"type", type}, {"size", size}, {"backend", backend}})) {
    double v = r->number_or("TFLOP/s", std::nan(""));
    if (!std::isnan(v) && (std::isnan(best) || v > best)) best = v;
  }
  return best;
}

void section_matmul(std::ostringstream& o, const Json& doc) {
  o << "## C1 — matrix product (TFLOP/s, higher is better)\n\n"
    << "nvhcq's kernels (the same CUBIN on both backends) by family -- simt (f32 on the CUDA "
       "cores), "
       "mma (mma.sync tensor cores), wgmma (sm_90 warpgroup tensor cores) -- and cuBLAS on the "
       "cuda "
       "backend's context. nv/cuda compares the two paths running the same kernel; the last column "
       "is "
       "the best nvhcq kernel on nv against cuBLAS.\n\n";
  for (const auto& type : distinct(doc, "type")) {
    auto families = matmul_families(doc, type);
    std::vector<std::string> headers = {"size"};
    for (const auto& f : families) {
      std::string label = f.empty() ? "" : " " + f;
      headers.push_back("nv" + label);
      headers.push_back("cuda" + label);
      headers.push_back("nv/cuda" + label);
    }
    headers.push_back("cuBLAS");
    headers.push_back("best nv % of cuBLAS");
    headers.push_back("kernels");
    Table t(headers);
    for (const auto& size : distinct(doc, "size", {{"type", type}})) {
      std::vector<std::string> row = {size};
      for (const auto& f : families) {
        Filter base = {{"type", type}, {"size", size}};
        if (!f.empty()) base.push_back({"family", f});
        Filter fn = base, fc = base;
        fn.push_back({"backend", "nv"});
        fc.push_back({"backend", "cuda"});
        double nv = metric(doc, fn, "TFLOP/s"), cu = metric(doc, fc, "TFLOP/s");
        row.push_back(cell(nv));
        row.push_back(cell(cu));
        row.push_back(ratio_cell(nv, cu));
      }
      double bl = metric(doc, {{"type", type}, {"size", size}, {"backend", "cublas"}}, "TFLOP/s");
      double best = best_nvhcq(doc, type, size, "nv");
      row.push_back(cell(bl));
      row.push_back((std::isnan(best) || std::isnan(bl)) ? "—"
                                                         : format_number(100.0 * best / bl) + "%");
      std::string kernels;
      for (const Json* r : rows_where(doc, {{"type", type}, {"size", size}})) {
        std::string backend = text_of(*r, "backend");
        std::string k = text_of(*r, "kernel");
        if (backend != "cublas" && kernels.find(k) == std::string::npos)
          kernels += (kernels.empty() ? "" : "; ") + k;
        if (text_of(*r, "check") == "FAILED")
          kernels += " (" + backend + " " + k + " FAILED its check)";
      }
      row.push_back(kernels);
      t.add(row);
    }
    o << "### " << type << "\n\n" << t.render();
  }
}

void section_bandwidth(std::ostringstream& o, const Json& doc) {
  o << "## C2 — copies (GB/s, higher is better) and allocation (µs, lower is better)\n\n"
    << "Pinned and device copies are timed on the GPU around a batch; pageable copies and "
       "allocations "
       "on the host clock. device->device counts bytes read plus bytes written.\n\n";
  Table t({"test", "size", "nv GB/s", "cuda GB/s", "nv/cuda"});
  Table a({"test", "size", "nv µs", "cuda µs", "nv/cuda"});
  for (const auto& test : distinct(doc, "test")) {
    for (const auto& size : distinct(doc, "size", {{"test", test}})) {
      bool alloc = test == "allocate" || test == "free";
      std::string key = alloc ? "us" : "GB/s";
      double nv = metric(doc, {{"test", test}, {"size", size}, {"backend", "nv"}}, key);
      double cu = metric(doc, {{"test", test}, {"size", size}, {"backend", "cuda"}}, key);
      (alloc ? a : t).add({test, size, cell(nv), cell(cu), ratio_cell(nv, cu)});
    }
  }
  o << t.render();
  if (!a.empty()) o << a.render();
}

// bench_launch's rows: (label, nv test prefix, cuda test prefix, metric).
struct LaunchPair {
  const char* label;
  const char* nv_test;
  const char* cuda_test;
  const char* metric;
};
const LaunchPair kLaunchPairs[] = {
    {"round trip p50 (µs)", "launch + signal round trip", "launch + synchronize round trip",
     "p50 us"},
    {"round trip p99 (µs)", "launch + signal round trip", "launch + synchronize round trip",
     "p99 us"},
    {"round trip min (µs)", "launch + signal round trip", "launch + synchronize round trip",
     "min us"},
    {"back-to-back, per kernel (µs)", "back-to-back, one submission", "back-to-back launches",
     "per kernel us"},
    {"graph replay, per kernel (µs)", "nvhcq graph of", "CUDA graph (Accelerator) of",
     "per kernel us"},
};

// The first row of `backend` whose test contains `fragment`.
double launch_metric(const Json& doc, const std::string& backend, const std::string& fragment,
                     const std::string& key) {
  for (const Json* r : rows_where(doc, {{"backend", backend}})) {
    if (text_of(*r, "test").find(fragment) != std::string::npos && (*r)[key].is_number())
      return (*r)[key].number();
  }
  return std::nan("");
}

void section_launch(std::ostringstream& o, const Json& doc) {
  o << "## C3 — launch latency (µs, lower is better)\n\n";
  Table t({"measure", "nv", "cuda", "nv/cuda"});
  for (const auto& p : kLaunchPairs) {
    double nv = launch_metric(doc, "nv", p.nv_test, p.metric);
    double cu = launch_metric(doc, "cuda", p.cuda_test, p.metric);
    t.add({p.label, cell(nv), cell(cu), ratio_cell(nv, cu)});
  }
  o << t.render() << "All rows of bench_launch:\n\n";
  Table all({"backend", "test", "p50 us", "p99 us", "min us", "per kernel us"});
  for (const Json& r : doc["rows"].array()) {
    all.add({text_of(r, "backend"), text_of(r, "test"), cell(r.number_or("p50 us", std::nan(""))),
             cell(r.number_or("p99 us", std::nan(""))), cell(r.number_or("min us", std::nan(""))),
             cell(r.number_or("per kernel us", std::nan("")))});
  }
  o << all.render();
}

void section_elementwise(std::ostringstream& o, const Json& doc) {
  o << "## C4 — elementwise kernels (GB/s read + written, higher is better)\n\n";
  Table t({"op", "type", "elements", "nv", "cuda", "nv/cuda"});
  for (const auto& type : distinct(doc, "type")) {
    for (const auto& op : distinct(doc, "op", {{"type", type}})) {
      for (const auto& count : distinct(doc, "count", {{"type", type}, {"op", op}})) {
        Filter f = {{"type", type}, {"op", op}, {"count", count}};
        Filter fn = f, fc = f;
        fn.push_back({"backend", "nv"});
        fc.push_back({"backend", "cuda"});
        double nv = metric(doc, fn, "GB/s"), cu = metric(doc, fc, "GB/s");
        t.add({op, type, count, cell(nv), cell(cu), ratio_cell(nv, cu)});
      }
    }
  }
  o << t.render();
}

void section_mlp(std::ostringstream& o, const Json& doc) {
  o << "## C5 — MLP 784-256-128-10 forward (latency µs lower is better; samples/s higher is "
       "better)\n\n";
  Table t({"type", "batch", "mode", "nv p50", "cuda p50", "nv/cuda p50", "nv p99", "cuda p99",
           "nv samples/s", "cuda samples/s"});
  for (const auto& type : distinct(doc, "type")) {
    for (const auto& batch : distinct(doc, "batch", {{"type", type}})) {
      for (const auto& mode : distinct(doc, "mode", {{"type", type}, {"batch", batch}})) {
        Filter f = {{"type", type}, {"batch", batch}, {"mode", mode}};
        Filter fn = f, fc = f;
        fn.push_back({"backend", "nv"});
        fc.push_back({"backend", "cuda"});
        double n50 = metric(doc, fn, "p50 us"), c50 = metric(doc, fc, "p50 us");
        t.add({type, batch, mode, cell(n50), cell(c50), ratio_cell(n50, c50),
               cell(metric(doc, fn, "p99 us")), cell(metric(doc, fc, "p99 us")),
               cell(metric(doc, fn, "samples/s")), cell(metric(doc, fc, "samples/s"))});
      }
    }
  }
  o << t.render();
}

// The "done when" targets, measured.
void section_targets(std::ostringstream& o, const CompareInputs& in) {
  Table t({"target", "measured", "goal", "status"});
  auto verdict = [](double value, double goal, bool at_most) {
    if (std::isnan(value)) return std::string("not measured");
    bool met = at_most ? value <= goal : value >= goal;
    if (met) return std::string("met");
    char buf[64];
    std::snprintf(buf, sizeof(buf), "missed (%.2f× off)", at_most ? value / goal : goal / value);
    return std::string(buf);
  };
  auto ratio_text = [](double nv, double cu, const char* unit) {
    if (std::isnan(nv) || std::isnan(cu)) return std::string("—");
    return format_number(nv) + " / " + format_number(cu) + " " + unit + " = " + ratio_cell(nv, cu);
  };
  if (auto it = in.results.find("launch"); it != in.results.end()) {
    const Json& d = it->second;
    struct Goal {
      const LaunchPair* pair;
      double goal;
    };
    for (const Goal& g : {Goal{&kLaunchPairs[0], 0.5}, Goal{&kLaunchPairs[1], 0.5},
                          Goal{&kLaunchPairs[3], 0.3}, Goal{&kLaunchPairs[4], 1.0}}) {
      double nv = launch_metric(d, "nv", g.pair->nv_test, g.pair->metric);
      double cu = launch_metric(d, "cuda", g.pair->cuda_test, g.pair->metric);
      t.add({std::string(g.pair->label) + ", nv/cuda", ratio_text(nv, cu, "µs"),
             "≤ " + format_number(g.goal) + "×", verdict(nv / cu, g.goal, true)});
    }
  }
  if (auto it = in.results.find("bandwidth"); it != in.results.end()) {
    const Json& d = it->second;
    double worst = std::nan("");
    std::string where;
    for (const auto& test : distinct(d, "test")) {
      if (test == "allocate" || test == "free") continue;
      for (const auto& size : distinct(d, "size", {{"test", test}})) {
        double r = metric(d, {{"test", test}, {"size", size}, {"backend", "nv"}}, "GB/s") /
                   metric(d, {{"test", test}, {"size", size}, {"backend", "cuda"}}, "GB/s");
        if (!std::isnan(r) && (std::isnan(worst) || r < worst)) {
          worst = r;
          where = test + " " + size;
        }
      }
    }
    t.add({"copies, nv/cuda GB/s (worst case)",
           std::isnan(worst) ? "—" : ratio_cell(worst, 1.0) + " (" + where + ")", "≥ 0.95×",
           verdict(worst, 0.95, false)});
  }
  if (auto it = in.results.find("matmul"); it != in.results.end()) {
    for (const char* type : {"f16", "bf16"}) {
      double nv = best_nvhcq(it->second, type, "4096", "nv");
      double bl =
          metric(it->second, {{"type", type}, {"size", "4096"}, {"backend", "cublas"}}, "TFLOP/s");
      double pct = 100.0 * nv / bl;
      std::string measured = std::isnan(pct) ? "—"
                                             : format_number(nv) + " / " + format_number(bl) +
                                                   " TFLOP/s = " + format_number(pct) + "%";
      t.add({std::string(type) + " GEMM 4096, best nv kernel % of cuBLAS", measured,
             "≥ 50% (goal 80%)",
             std::isnan(pct) ? "not measured"
             : pct >= 80     ? "met the goal"
             : pct >= 50     ? "met"
                             : verdict(pct, 50, false)});
    }
  }
  o << "## Targets (issue 4)\n\n" << t.render();
}

}  // namespace

std::string text_of(const Json& row, const std::string& key) {
  const Json& v = row[key];
  if (v.is_string()) return v.string();
  if (v.is_number()) {
    double d = v.number();
    if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
    return format_number(d);
  }
  return "";
}

std::vector<const Json*> rows_where(const Json& doc, const Filter& filter) {
  std::vector<const Json*> out;
  for (const Json& row : doc["rows"].array()) {
    bool match = true;
    for (const auto& [k, v] : filter) match = match && text_of(row, k) == v;
    if (match) out.push_back(&row);
  }
  return out;
}

double metric(const Json& doc, const Filter& filter, const std::string& key) {
  for (const Json* r : rows_where(doc, filter)) {
    if ((*r)[key].is_number()) return (*r)[key].number();
  }
  return std::nan("");
}

std::vector<std::string> distinct(const Json& doc, const std::string& key, const Filter& filter) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Json* r : rows_where(doc, filter)) {
    std::string v = text_of(*r, key);
    if (!v.empty() && seen.insert(v).second) out.push_back(v);
  }
  return out;
}

std::string format_number(double v) {
  char buf[64];
  double a = std::fabs(v);
  std::snprintf(buf, sizeof(buf),
                a >= 1000   ? "%.0f"
                : a >= 10   ? "%.1f"
                : a >= 0.01 ? "%.3g"
                            : "%.2g",
                v);
  return buf;
}

CompareInputs load_results(const std::string& dir) {
  CompareInputs in;
  for (const char* name : kBenchmarks) {
    std::string path = dir + "/" + name + ".json";
    if (!std::filesystem::exists(path)) continue;
    try {
      in.results[name] = Json::parse_file(path);
    } catch (const Error& e) {
      in.status[name] = std::string("unreadable results: ") + e.what();
    }
  }
  return in;
}

std::string render_markdown(const CompareInputs& in, const std::vector<std::string>& charts,
                            const std::string& charts_note) {
  std::ostringstream o;
  o << "# nvhcq benchmarks: nv (direct path) vs cuda (driver API)\n\n";
  std::string device, backends;
  for (const auto& [name, doc] : in.results) {
    if (device.empty()) device = doc.string_or("device", "");
    if (backends.empty()) backends = doc.string_or("backends", "");
  }
  if (!device.empty()) o << "- device: " << device << "\n";
  if (!backends.empty()) o << "- backends: " << backends << "\n";
  if (!in.generated.empty()) o << "- generated: " << in.generated << "\n";
  o << "- ratios are nv ÷ cuda of the value shown: for throughput (TFLOP/s, GB/s, samples/s) above "
       "1 "
       "means nv is faster; for times (µs) below 1 means nv is faster.\n";
  for (const auto& [name, st] : in.status) o << "- " << name << ": " << st << "\n";
  o << "\n";
  section_targets(o, in);
  if (!charts_note.empty()) o << charts_note << "\n\n";
  auto chart = [&](const std::string& name) {
    for (const auto& c : charts) {
      if (c == name + ".png") o << "![" << name << "](" << c << ")\n\n";
    }
  };
  using Section = std::function<void(std::ostringstream&, const Json&)>;
  const std::pair<const char*, Section> sections[] = {{"matmul", section_matmul},
                                                      {"bandwidth", section_bandwidth},
                                                      {"launch", section_launch},
                                                      {"elementwise", section_elementwise},
                                                      {"mlp", section_mlp}};
  for (const auto& [name, fn] : sections) {
    auto it = in.results.find(name);
    if (it == in.results.end()) continue;
    fn(o, it->second);
    chart(name);
  }
  return o.str();
}

}  // namespace nvhcq::bench
