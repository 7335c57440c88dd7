// pe-suite report: Markdown with SVG plots from census (shards merged), benchmark and compare JSON.
#include "pe/reports/report.h"

#include <fmt/format.h>

#include "common.h"
#include "pe/harness/census.h"
#include "pe/harness/exhaustive.h"
#include "pe/reports/bench_results.h"

namespace pe::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> census, exhaustive;
  std::string bench, compare, properties, out;
};

}  // namespace

int write_report_from(const reports::ReportInputs& in, const std::string& dir) {
  const reports::ReportOutput out = reports::write_report(in, dir);
  fmt::print("report: {} ({} plots{})\n", out.markdown_path, out.plots.size(),
             out.plots_skipped ? "; plots skipped, no gnuplot" : "");
  return kOk;
}

void add_report(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("report", "Markdown report with SVG plots from census, benchmark and compare JSON");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("--census", a->census, "Census JSON (repeat for shards; they are merged)")->required();
  cmd->add_option(
      "--exhaustive", a->exhaustive,
      "Exhaustive census JSON (census --exhaustive; repeat for shards: merged, gaps and overlaps refused)");
  cmd->add_option("--bench", a->bench, "Benchmark JSON (pe-suite bench --out)");
  cmd->add_option("--compare", a->compare, "Comparison JSON (pe-suite compare --out)");
  cmd->add_option("--properties", a->properties, "GoogleTest JSON of a property run");
  cmd->add_option("--out", a->out, "Report folder")->required();
  cmd->callback([a, &exit_code] {
    reports::ReportInputs in;
    std::vector<nlohmann::json> docs;
    for (const std::string& c : a->census) {
      docs.push_back(read_json_file(c, "--census"));
      in.sources.push_back(c);
    }
    try {
      in.census = census::merge_instances(docs);
      in.rope_scaling = census::rope_scaling_of(docs);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--census: ") + e.what());
    }
    if (!a->exhaustive.empty()) {
      std::vector<nlohmann::json> shards;
      for (const std::string& e : a->exhaustive) {
        shards.push_back(read_json_file(e, "--exhaustive"));
        in.sources.push_back(e);
      }
      try {
        in.exhaustive = exhaustive::merge(shards);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--exhaustive: ") + e.what());
      }
    }
    if (!a->bench.empty()) in.bench = read_json_file(a->bench, "--bench"), in.sources.push_back(a->bench);
    if (!a->compare.empty())
      in.compare = read_json_file(a->compare, "--compare"), in.sources.push_back(a->compare);
    if (!a->properties.empty())
      in.properties = read_json_file(a->properties, "--properties"), in.sources.push_back(a->properties);
    try {
      exit_code = write_report_from(in, a->out);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(std::string("report: unexpected JSON content: ") + e.what());
    }
  });
}

}  // namespace pe::cli
