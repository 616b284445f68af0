#pragma once
// bench_compare's report: the JSON files of bench_matmul, bench_bandwidth,
// bench_launch, bench_elementwise and bench_mlp combined into one markdown
// document (nv and cuda side by side with nv/cuda ratios, the targets
// checked) and gnuplot charts (data files + one script -> PNGs).

#include <map>
#include <string>
#include <utility>
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

// Reading a benchmark's result rows (doc["rows"]): `filter` pairs a field with
// the text it must have.
using Filter = std::vector<std::pair<std::string, std::string>>;
// A field as text: strings as they are, integral numbers without a fraction.
std::string text_of(const Json& row, const std::string& key);
// Rows of `doc` whose fields equal every filter value.
std::vector<const Json*> rows_where(const Json& doc, const Filter& filter);
// The first matching row's number `key`, or NaN.
double metric(const Json& doc, const Filter& filter, const std::string& key);
// Distinct non-empty values of `key` among the matching rows, in row order.
std::vector<std::string> distinct(const Json& doc, const std::string& key,
                                  const Filter& filter = {});

}  // namespace nvhcq::bench
