// Runs the benchmark suite -- C1 bench_matmul, C2 bench_bandwidth, C3
// bench_launch, C4 bench_elementwise, C5 bench_mlp -- on both backends, each
// program in a process of its own (JSON and log into --out), and renders one
// report: <out>/report.md (nv and cuda side by side, nv/cuda ratios, the
// issue's targets) with PNG charts drawn by gnuplot from <out>/charts.gp.
// gnuplot is installed on demand (scripts/ensure-deb-packages.sh gnuplot-nox,
// as root); where it cannot be, the report says so and the charts can be drawn
// later with `gnuplot charts.gp` in <out>, or `bench_compare --render-only`.
//   bench_compare --out DIR [--backend nv,cuda] [--only matmul,launch] [--quick]
//   bench_compare --out DIR --render-only        (report + charts from DIR's JSON)

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "base/args.h"
#include "support/compare_report.h"
#include "support/harness.h"
#include "support/subprocess.h"

namespace nvhcq::bench {
namespace {

namespace fs = std::filesystem;

struct Step {
  const char* name;     // results file <name>.json
  const char* program;  // bench_<...>
  std::vector<std::string> quick_args;
};

const std::vector<Step>& steps() {
  static const std::vector<Step> s = {
      {"matmul", "bench_matmul", {"--sizes", "256,1024,4096", "--blocks", "3"}},
      {"bandwidth",
       "bench_bandwidth",
       {"--sizes", "1Mi,256Mi", "--alloc-sizes", "1Mi,256Mi", "--blocks", "3"}},
      {"launch", "bench_launch", {"--iters", "500", "--back-to-back", "2000"}},
      {"elementwise", "bench_elementwise", {"--counts", "1M,100M", "--blocks", "3"}},
      {"mlp", "bench_mlp", {"--iters", "200"}},
  };
  return s;
}

std::string now_text() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", std::localtime(&t));
  return buf;
}

// scripts/ensure-deb-packages.sh near the program: a source tree's build folder
// (build/bench/), a dist folder (dist/bench/), or the current directory.
std::string find_ensure_script() {
  std::string exe = executable_dir();
  for (const std::string& c :
       {exe + "/../../scripts/ensure-deb-packages.sh", exe + "/../scripts/ensure-deb-packages.sh",
        exe + "/../ensure-deb-packages.sh", std::string("scripts/ensure-deb-packages.sh")}) {
    if (fs::exists(c)) return fs::weakly_canonical(c).string();
  }
  return "";
}

// gnuplot's path, installing gnuplot-nox when it is missing and we may; "" and
// `why` otherwise.
std::string ensure_gnuplot(const std::string& out, std::string* why) {
  std::string gp = find_on_path("gnuplot");
  if (!gp.empty()) return gp;
  std::string script = find_ensure_script();
  if (script.empty()) {
    *why =
        "gnuplot is not installed and scripts/ensure-deb-packages.sh was not found next to this "
        "program";
    return "";
  }
  std::printf("bench_compare: gnuplot is missing; trying %s gnuplot-nox\n", script.c_str());
  std::fflush(stdout);
  ProcessResult r =
      run_process({"/bin/bash", script, "gnuplot-nox"}, out + "/gnuplot-install.log", 600);
  gp = find_on_path("gnuplot");
  if (gp.empty()) {
    *why = "gnuplot is not installed and could not be (" + r.describe() +
           "): " + tail_of_file(out + "/gnuplot-install.log", 3);
    while (!why->empty() && why->back() == '\n') why->pop_back();
  }
  return gp;
}

int run(const ArgParser::Result& args) {
  const std::string out = args.get("out");
  if (out.empty()) throw UsageError("--out DIR is required");
  fs::create_directories(out);
  const bool render_only = args.flag("render-only");
  const bool quick = args.flag("quick");
  const double timeout = args.get_double("timeout");
  std::string bin = args.get("bin");
  if (bin.empty()) bin = executable_dir();
  std::vector<std::string> only = split_list(args.get("only"));
  for (const auto& name : only) {
    bool known = false;
    for (const Step& s : steps()) known = known || name == s.name;
    if (!known) {
      throw UsageError("--only: unknown benchmark '" + name +
                       "' (matmul, bandwidth, launch, elementwise, mlp)");
    }
  }
  parse_backend_list(args.get("backend"));  // validate before minutes of work

  std::map<std::string, std::string> status;
  bool all_ok = true;
  if (!render_only) {
    int index = 0;
    for (const Step& s : steps()) {
      ++index;
      if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
      std::string json = out + "/" + s.name + ".json", log = out + "/" + s.name + ".log";
      fs::remove(json);
      std::vector<std::string> argv = {bin + "/" + s.program, "--backend", args.get("backend"),
                                       "--json", json};
      if (quick) argv.insert(argv.end(), s.quick_args.begin(), s.quick_args.end());
      std::printf("[%d/%zu] %s ...", index, steps().size(), s.program);
      std::fflush(stdout);
      ProcessResult r = run_process(argv, log, timeout);
      std::printf(" %s (%.0f s, log %s)\n", r.ok() ? "ok" : r.describe().c_str(), r.seconds,
                  log.c_str());
      std::string note;
      if (!r.ok() && !fs::exists(json) && std::string(s.name) == "matmul") {
        // No results at all (a crash, a GPU fault, a hang): the sm_90 wgmma kernel is
        // the newest code in the run; measure the rest without it.
        fs::rename(log, out + "/matmul-first-attempt.log");
        argv.push_back("--no-wgmma");
        std::printf("      retrying without the wgmma kernel ...");
        std::fflush(stdout);
        ProcessResult again = run_process(argv, log, timeout);
        std::printf(" %s (%.0f s)\n", again.ok() ? "ok" : again.describe().c_str(), again.seconds);
        note = "the first run ended (" + r.describe() +
               ") without results, see matmul-first-attempt.log; " +
               "these results are from a rerun with --no-wgmma";
        all_ok = false;
        r = again;
      }
      if (!r.ok()) {
        all_ok = false;
        std::printf("%s", tail_of_file(log, 15).c_str());
        note += std::string(note.empty() ? "" : "; ") + s.program + " failed: " + r.describe() +
                " (see " + s.name + ".log)";
      }
      if (!note.empty()) status[s.name] = note;
      std::fflush(stdout);
    }
  }

  CompareInputs in = load_results(out);
  for (const auto& [k, v] : status) in.status[k] = v;
  in.generated = now_text();
  if (in.results.empty())
    throw Error("no benchmark results in " + out + " (nothing ran, or every run failed)");

  std::vector<std::string> pngs = write_chart_script(in, out);
  std::string charts_note;
  std::vector<std::string> drawn;
  if (args.flag("no-charts")) {
    charts_note = "Charts not drawn (--no-charts): run `gnuplot charts.gp` in this folder.";
  } else {
    std::string why;
    std::string gnuplot = ensure_gnuplot(out, &why);
    if (gnuplot.empty()) {
      charts_note =
          "Charts not drawn: " + why +
          ". Draw them on any machine with gnuplot: "
          "`gnuplot charts.gp` in this folder (or `bench_compare --render-only --out DIR`).";
    } else {
      for (const auto& p : pngs) fs::remove(out + "/" + p);
      ProcessResult r = run_process({gnuplot, "charts.gp"}, out + "/gnuplot.log", 120, out);
      for (const auto& p : pngs) {
        if (fs::exists(out + "/" + p) && fs::file_size(out + "/" + p) > 0) drawn.push_back(p);
      }
      if (!r.ok() || drawn.size() != pngs.size()) {
        charts_note = "Some charts failed to draw (gnuplot " + r.describe() + "; see gnuplot.log).";
      }
    }
  }
  if (!charts_note.empty()) std::printf("bench_compare: %s\n", charts_note.c_str());

  std::string md = render_markdown(in, drawn, charts_note);
  std::ofstream(out + "/report.md") << md;
  std::printf("\n%s\nbench_compare: wrote %s/report.md", md.c_str(), out.c_str());
  for (const auto& p : drawn) std::printf(", %s", p.c_str());
  std::printf("\n");
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace nvhcq::bench

int main(int argc, char** argv) {
  using namespace nvhcq;
  ArgParser parser(
      "bench_compare",
      "Runs C1-C5 on nv and cuda and writes one report (markdown + PNG charts) into --out.");
  parser.option("out", "DIR", "output folder (JSON, logs, report.md, charts)", "bench-report")
      .option("backend", "LIST", "backends: nv, cuda or both", "nv,cuda")
      .option("only", "LIST", "run only these: matmul, bandwidth, launch, elementwise, mlp")
      .flag("quick", "smaller sizes and fewer repetitions (a sanity run)")
      .flag("render-only", "run nothing: report and charts from the JSON already in --out")
      .flag("no-charts", "write charts.gp and its data, do not run gnuplot")
      .option("timeout", "S", "time limit per benchmark program", "600")
      .option("bin", "DIR", "where the bench_* programs are (default: next to this one)");
  return bench::parse_and_run("bench_compare", parser, argc, argv, bench::run);
}
