// bench_compare's charts: one data file per panel under <dir>/charts/ and one
// gnuplot script, <dir>/charts.gp, that draws every PNG from them. The script
// is kept with the report, so the charts can be drawn again elsewhere (any
// machine with gnuplot: `cd DIR && gnuplot charts.gp`).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "support/compare_report.h"

namespace nvhcq::bench {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "?";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// "host->device pinned" -> "host_device_pinned": a file-name-safe slug.
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

// A data label gnuplot reads as one column: quoted, without inner quotes.
std::string label(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw Error("cannot write " + path);
  out << text;
}

bool any_value(const std::vector<double>& v) {
  for (double d : v) {
    if (!std::isnan(d)) return true;
  }
  return false;
}

const char* kHistogram =
    "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 "
    "border -1\n"
    "set boxwidth 0.9\nset xtics rotate by -30\nset yrange [0:*]\nset xlabel ''\n"
    "set offsets 0, 0, graph 0.1, 0\nset key above\n";
const char* kHistogramOff =
    "set style data lines\nset xtics norotate\nset autoscale y\nset offsets 0, 0, 0, 0\n";

void chart_matmul(const Json& doc, const std::string& dir, std::ostringstream& gp) {
  auto types = distinct(doc, "type");
  gp << "set terminal @TERM size " << 500 * types.size() << ",460\nset output 'matmul.png'\n"
     << "set multiplot layout 1," << types.size()
     << " title 'C1 matrix product, TFLOP/s (higher is better)'\n"
     << "set logscale x 2\nset xlabel 'M = N = K'\nset ylabel 'TFLOP/s'\nset key inside top left\n";
  for (const auto& type : types) {
    // Series: (backend, family) of nvhcq's kernels, then cuBLAS.
    std::vector<std::pair<std::string, std::string>> series;
    for (const Json& row : doc["rows"].array()) {
      if (text_of(row, "type") != type || text_of(row, "backend") == "cublas") continue;
      std::pair<std::string, std::string> s{text_of(row, "backend"), text_of(row, "family")};
      if (std::find(series.begin(), series.end(), s) == series.end()) series.push_back(s);
    }
    series.push_back({"cublas", ""});
    std::string file = "charts/matmul_" + type + ".dat";
    std::ostringstream d;
    d << "# size";
    for (const auto& [be, fam] : series) d << " " << be << (fam.empty() ? "" : "_" + fam);
    d << "  (TFLOP/s)\n";
    std::vector<std::vector<double>> cols(series.size());
    for (const auto& size : distinct(doc, "size", {{"type", type}})) {
      d << size;
      for (size_t i = 0; i < series.size(); ++i) {
        std::vector<std::pair<std::string, std::string>> f = {
            {"type", type}, {"size", size}, {"backend", series[i].first}};
        if (!series[i].second.empty()) f.push_back({"family", series[i].second});
        double v = metric(doc, f, "TFLOP/s");
        cols[i].push_back(v);
        d << " " << num(v);
      }
      d << "\n";
    }
    write_file(dir + "/" + file, d.str());
    gp << "set title '" << type << "'\n";
    std::vector<std::string> parts;
    for (size_t i = 0; i < series.size(); ++i) {
      if (!any_value(cols[i])) continue;
      const auto& [be, fam] = series[i];
      std::string title = be == "cublas" ? "cuBLAS" : be + (fam.empty() ? "" : " " + fam);
      std::string style = be == "cuda"     ? "lw 2 dt 2 pt 6"
                          : be == "cublas" ? "lw 3 lc rgb 'black' pt 5"
                                           : "lw 2 pt 7";
      parts.push_back("'" + file + "' using 1:" + std::to_string(i + 2) + " with linespoints " +
                      style + " title '" + title + "'");
    }
    if (parts.empty()) parts.push_back("NaN notitle");
    gp << "plot ";
    for (size_t i = 0; i < parts.size(); ++i) gp << (i ? ", " : "") << parts[i];
    gp << "\n";
  }
  gp << "unset multiplot\nunset logscale x\nunset title\n\n";
}

void chart_bandwidth(const Json& doc, const std::string& dir, std::ostringstream& gp) {
  auto tests = distinct(doc, "test");
  gp << "set terminal @TERM size 1500,900\nset output 'bandwidth.png'\n"
     << "set multiplot layout 2,3 title 'C2 copies (GB/s, higher is better) and allocation (us, "
        "lower is better)'\n"
     << kHistogram;
  for (const auto& test : tests) {
    bool alloc = test == "allocate" || test == "free";
    if (test == "free") continue;  // one allocation panel: allocate
    std::string file = "charts/bandwidth_" + slug(test) + ".dat";
    std::ostringstream d;
    d << "# size nv cuda\n";
    for (const auto& size : distinct(doc, "size", {{"test", test}})) {
      std::string key = alloc ? "us" : "GB/s";
      d << label(size) << " "
        << num(metric(doc, {{"test", test}, {"size", size}, {"backend", "nv"}}, key)) << " "
        << num(metric(doc, {{"test", test}, {"size", size}, {"backend", "cuda"}}, key)) << "\n";
    }
    write_file(dir + "/" + file, d.str());
    gp << "set title '" << test << "'\nset ylabel '" << (alloc ? "us (p50)" : "GB/s") << "'\n"
       << "plot '" << file << "' using 2:xtic(1) title 'nv', '' using 3 title 'cuda'\n";
  }
  gp << "unset multiplot\nunset title\n" << kHistogramOff << "\n";
}

void chart_launch(const Json& doc, const std::string& dir, std::ostringstream& gp) {
  struct Pair {
    const char* label;
    const char* nv;
    const char* cuda;
    const char* key;
  };
  const Pair pairs[] = {
      {"round trip p50", "launch + signal round trip", "launch + synchronize round trip", "p50 us"},
      {"round trip p99", "launch + signal round trip", "launch + synchronize round trip", "p99 us"},
      {"back-to-back per kernel", "back-to-back, one submission", "back-to-back launches",
       "per kernel us"},
      {"graph replay per kernel", "nvhcq graph of", "CUDA graph (Accelerator) of", "per kernel us"},
  };
  auto find = [&](const std::string& backend, const std::string& fragment, const std::string& key) {
    for (const Json& row : doc["rows"].array()) {
      if (text_of(row, "backend") == backend &&
          text_of(row, "test").find(fragment) != std::string::npos && row[key].is_number()) {
        return row[key].number();
      }
    }
    return std::nan("");
  };
  std::ostringstream d;
  d << "# measure nv cuda (us)\n";
  for (const auto& p : pairs) {
    d << label(p.label) << " " << num(find("nv", p.nv, p.key)) << " "
      << num(find("cuda", p.cuda, p.key)) << "\n";
  }
  write_file(dir + "/charts/launch.dat", d.str());
  gp << "set terminal @TERM size 900,500\nset output 'launch.png'\n"
     << kHistogram << "set title 'C3 launch latency (us, lower is better)'\nset ylabel 'us'\n"
     << "plot 'charts/launch.dat' using 2:xtic(1) title 'nv', '' using 3 title 'cuda'\n"
     << "unset title\n"
     << kHistogramOff << "\n";
}

void chart_elementwise(const Json& doc, const std::string& dir, std::ostringstream& gp) {
  auto types = distinct(doc, "type");
  gp << "set terminal @TERM size " << 650 * types.size() << ",480\nset output 'elementwise.png'\n"
     << "set multiplot layout 1," << types.size()
     << " title 'C4 elementwise, GB/s read + written (higher is better)'\n"
     << "set logscale x 10\nset xlabel 'elements'\nset ylabel 'GB/s'\nset key inside bottom "
        "right\n";
  for (const auto& type : types) {
    auto ops = distinct(doc, "op", {{"type", type}});
    std::string file = "charts/elementwise_" + type + ".dat";
    std::ostringstream d;
    d << "# elements";
    for (const auto& op : ops) d << " " << op << "_nv " << op << "_cuda";
    d << "\n";
    for (const auto& count : distinct(doc, "count", {{"type", type}})) {
      double n = metric(doc, {{"type", type}, {"count", count}}, "elements");
      d << num(n);
      for (const auto& op : ops) {
        for (const char* be : {"nv", "cuda"}) {
          d << " "
            << num(metric(doc, {{"type", type}, {"count", count}, {"op", op}, {"backend", be}},
                          "GB/s"));
        }
      }
      d << "\n";
    }
    write_file(dir + "/" + file, d.str());
    gp << "set title '" << type << "'\nplot ";
    for (size_t i = 0; i < ops.size(); ++i) {
      gp << (i ? ", " : "") << "'" << file << "' using 1:" << 2 + 2 * i
         << " with linespoints lw 2 lc " << i + 1 << " pt 7 title '" << ops[i]
         << " nv', '' using 1:" << 3 + 2 * i << " with linespoints lw 2 dt 2 lc " << i + 1
         << " pt 6 title '" << ops[i] << " cuda'";
    }
    if (ops.empty()) gp << "NaN notitle";
    gp << "\n";
  }
  gp << "unset multiplot\nunset logscale x\nunset title\n\n";
}

void chart_mlp(const Json& doc, const std::string& dir, std::ostringstream& gp) {
  std::ostringstream d;
  d << "# config nv_p50 cuda_p50 nv_samples cuda_samples\n";
  for (const auto& type : distinct(doc, "type")) {
    for (const auto& batch : distinct(doc, "batch", {{"type", type}})) {
      for (const auto& mode : distinct(doc, "mode", {{"type", type}, {"batch", batch}})) {
        std::vector<std::pair<std::string, std::string>> f = {
            {"type", type}, {"batch", batch}, {"mode", mode}};
        auto with = [&](const char* be) {
          auto g = f;
          g.push_back({"backend", be});
          return g;
        };
        d << label(type + " b" + batch + " " + mode) << " "
          << num(metric(doc, with("nv"), "p50 us")) << " "
          << num(metric(doc, with("cuda"), "p50 us")) << " "
          << num(metric(doc, with("nv"), "samples/s")) << " "
          << num(metric(doc, with("cuda"), "samples/s")) << "\n";
      }
    }
  }
  write_file(dir + "/charts/mlp.dat", d.str());
  gp << "set terminal @TERM size 1400,500\nset output 'mlp.png'\n"
     << "set multiplot layout 1,2 title 'C5 MLP 784-256-128-10 forward'\n"
     << kHistogram << "set title 'latency p50 (us, lower is better)'\nset ylabel 'us'\n"
     << "plot 'charts/mlp.dat' using 2:xtic(1) title 'nv', '' using 3 title 'cuda'\n"
     << "set title 'samples/s at p50 latency (higher is better)'\nset ylabel 'samples/s'\nset "
        "autoscale y\nset logscale y\n"
     << "plot 'charts/mlp.dat' using 4:xtic(1) title 'nv', '' using 5 title 'cuda'\n"
     << "unset logscale y\nunset multiplot\nunset title\n"
     << kHistogramOff << "\n";
}

}  // namespace

std::vector<std::string> write_chart_script(const CompareInputs& in, const std::string& dir) {
  std::filesystem::create_directories(dir + "/charts");
  std::ostringstream gp;
  gp << "# Draws this report's charts from charts/*.dat: run `gnuplot charts.gp` in this folder.\n"
     << "# Written by bench_compare.\n"
     << "set macros\nset datafile missing '?'\nset grid ytics\nset encoding utf8\n"
     << "TERM = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo noenhanced font \",10\"' : "
        "'png noenhanced'\n\n";
  std::vector<std::string> pngs;
  using Chart = void (*)(const Json&, const std::string&, std::ostringstream&);
  const std::pair<const char*, Chart> charts[] = {{"matmul", chart_matmul},
                                                  {"bandwidth", chart_bandwidth},
                                                  {"launch", chart_launch},
                                                  {"elementwise", chart_elementwise},
                                                  {"mlp", chart_mlp}};
  for (const auto& [name, fn] : charts) {
    auto it = in.results.find(name);
    if (it == in.results.end() || it->second["rows"].array().empty()) continue;
    fn(it->second, dir, gp);
    pngs.push_back(std::string(name) + ".png");
  }
  gp << "unset output\n";
  write_file(dir + "/charts.gp", gp.str());
  return pngs;
}

}  // namespace nvhcq::bench
