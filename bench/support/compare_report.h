#pragma once
// bench_compare's report: the JSON files of bench_matmul, bench_bandwidth,
// bench_launch, bench_elementwise and bench_mlp combined into one markdown
// document (nv and cuda side by side with nv/cuda ratios, the targets
// checked) and gnuplot charts (data files + one script -> PNGs).

#include <map>
#include <string>
#include <vector>

#include "support/json.h"

namespace nvhcq::bench {

// The benchmarks' results by name ("matmul", "bandwidth", "launch",
// "elementwise", "mlp"); absent ones are left out of the report.
struct CompareInputs {
  std::map<std::string, Json> results;
  std::map<std::string, std::string> status;  // per benchmark: "ok" or what went wrong
  std::string generated;                      // when, as text
};

// Reads <dir>/<name>.json for every benchmark name present.
CompareInputs load_results(const std::string& dir);

// The markdown report. `charts` are PNG file names (relative to the report) to show.
std::string render_markdown(const CompareInputs& in, const std::vector<std::string>& charts,
                            const std::string& charts_note);

// Writes the chart data (<dir>/charts/*.dat) and <dir>/charts.gp, which renders
// <dir>/<name>.png for each returned name when run by gnuplot from <dir>.
std::vector<std::string> write_chart_script(const CompareInputs& in, const std::string& dir);

// "1.23", "45.6", "1234": the precision the tables use.
std::string format_number(double v);

}  // namespace nvhcq::bench
