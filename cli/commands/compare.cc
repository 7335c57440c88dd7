// pe-suite compare BASE.json NEW.json: regression gate between two benchmark runs (compare.h).
#include "pe/reports/compare.h"

#include <fmt/format.h>

#include <fstream>

#include "common.h"
#include "pe/reports/bench_results.h"

namespace pe::cli {
namespace {

struct CompareArgs {
  std::string base, next, threshold = "5%", json_out, markdown_out;
  double alpha = 0.05;
  bool all = false;
};

int run_compare(const CompareArgs& a) {
  reports::CompareOptions o;
  o.threshold = parse_fraction(a.threshold, "--threshold");
  if (!(a.alpha > 0 && a.alpha < 1))
    throw UsageError(fmt::format("--alpha: must be in (0, 1), got {}", a.alpha));
  o.alpha = a.alpha;
  std::vector<reports::Comparison> rows;
  try {
    rows = reports::compare_runs(read_json_file(a.base, "BASE"), read_json_file(a.next, "NEW"), o);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("compare: unexpected benchmark JSON: {}", e.what()));
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("compare: {}", e.what()));
  }
  const std::string md = reports::compare_markdown(rows, o, a.all);
  fmt::print("{}", md);
  if (!a.json_out.empty()) write_text(a.json_out, reports::to_json(rows, o).dump(2) + "\n");
  if (!a.markdown_out.empty()) write_text(a.markdown_out, reports::compare_markdown(rows, o, true));
  const bool bad = reports::has_regression(rows);
  fmt::print("\n{}\n", bad ? "verdict: REGRESSION" : "verdict: no regression");
  return bad ? kCheckFailed : kOk;
}

}  // namespace

void add_compare(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("compare", "Regression gate: two benchmark JSON runs, Mann-Whitney per benchmark");
  auto a = std::make_shared<CompareArgs>();
  cmd->add_option("BASE", a->base, "Baseline run (pe-suite bench --out)")->required();
  cmd->add_option("NEW", a->next, "New run")->required();
  cmd->add_option("--threshold", a->threshold, "Smallest median slowdown that counts (5% or 0.05)")
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha, "False discovery rate of the test")->capture_default_str();
  cmd->add_flag("--all", a->all, "List every benchmark, not only the changed ones");
  cmd->add_option("--out", a->json_out, "Write the comparison as JSON (for pe-suite report --compare)");
  cmd->add_option("--markdown", a->markdown_out, "Write the full Markdown table here");
  cmd->callback([a, cmd, &exit_code] {
    check_output_paths(*cmd, {"--out", "--markdown"}, {"BASE", "NEW"});
    exit_code = run_compare(*a);
  });
}

}  // namespace pe::cli
