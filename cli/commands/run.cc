// pe-suite run: the main job. Properties (quick) and the census of every variant, a quick
// benchmark, and the report (Markdown + SVG + the JSON it came from) in one folder; prints a
// one-screen summary. Exit 1 when a variant breaks its contract or a property fails.
#include <fmt/format.h>

#include <filesystem>

#include "bench.h"
#include "common.h"
#include "pe/reports/bench_results.h"
#include "pe/reports/report.h"
#include "pe/reports/variant_summary.h"
#include "plugin_option.h"
#include "verify.h"

namespace pe::cli {

int write_report_from(const reports::ReportInputs& in, const std::string& dir);

namespace {

struct RunArgs {
  std::string dir = "reports/out/latest", effort = "quick", glob = "*";
  std::uint64_t seed = kDefaultSeed;
  bool bench = true;
};

int run_main(const RunArgs& a) {
  VerifyOptions v;
  v.glob = a.glob;
  v.effort = a.effort;
  v.seed = a.seed;
  v.junit_out = a.dir + "/junit.xml";
  v.properties_log = a.dir + "/properties.log";
  v.census_table_at = a.dir + "/census.md";
  std::filesystem::create_directories(a.dir);
  const VerifyResult verified = verify(v);

  reports::ReportInputs in;
  in.census = verified.census["instances"];
  in.sources = {"census (" + a.effort + ")"};
  if (verified.properties) in.properties = verified.properties->gtest, in.sources.push_back("properties");
  int bench_status = kOk;
  if (a.bench) {
    fmt::print("\n== quick benchmark (Google Benchmark console log: {}/bench.log) ==\n", a.dir);
    BenchOptions b;
    b.quick = true;
    b.glob = a.glob;
    b.out = a.dir + "/bench.json";
    b.console_log = a.dir + "/bench.log";
    bench_status = run_bench(b);
    if (bench_status == kOk) {
      in.bench = read_json_file(b.out, "bench");
      in.sources.push_back("bench (quick)");
    } else {
      fmt::print("benchmarks failed (see {}); the report has no speed section\n", b.console_log);
    }
  }
  fmt::print("\n== report ==\n");
  write_report_from(in, a.dir);
  const auto records =
      in.bench.is_object() ? reports::bench_records(in.bench) : std::vector<reports::BenchRecord>{};
  fmt::print("\n== summary ==\n{}",
             reports::variant_table(reports::variant_rows(in.census, records, in.properties)));
  const bool ok = verified.exit_code == kOk && bench_status == kOk;
  fmt::print("\n{}: {}/report.md\n", ok ? "all variants within their contracts" : "FAILED", a.dir);
  return ok ? kOk : kCheckFailed;
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "The main job: verify every variant, a quick benchmark, the report");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("--out-dir", a->dir, "Where the report goes")->capture_default_str();
  cmd->add_option("--effort", a->effort, "quick or full verification")->capture_default_str();
  cmd->add_option("--variant", a->glob, "Variants to include (glob)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "RapidCheck seed")->capture_default_str()->check(non_negative_integer());
  cmd->add_flag("!--no-bench", a->bench, "Skip the benchmark");
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([a, plugins, &exit_code] {
    load_plugins(*plugins);
    exit_code = run_main(*a);
  });
}

}  // namespace pe::cli
