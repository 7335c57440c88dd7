// pe-suite bench: the benchmark grid (report mode: the full grid with 9 repetitions; --quick: the
// quick grid), run by the pe_bench binary built beside this one. Google Benchmark's console rows (seven
// lines of ~900 characters per benchmark with 3 repetitions) go to a file beside the JSON unless --raw;
// the terminal gets one summary table per family (pe/reports/bench_summary.h).
#include "bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common.h"
#include "pe/reports/bench_results.h"
#include "pe/reports/bench_summary.h"
#include "plugin_option.h"

namespace pe::cli {

int run_bench(const BenchOptions& o) {
  const std::optional<std::string> exe = helper_executable("pe_bench");
  if (!exe)
    throw UsageError(
        "bench: this build has no benchmarks (no pe_bench beside this pe-suite; configure with "
        "PE_BUILD_BENCH=ON)");
  std::vector<std::string> args = {*exe, "--mode", o.quick ? "quick" : "report", "--variant", o.glob};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  const int status = spawn_and_wait(args, {}, o.console_log);
  if (status == 2)
    throw UsageError(o.console_log.empty()
                         ? "bench: pe_bench rejected its arguments (see above)"
                         : "bench: pe_bench rejected its arguments (see " + o.console_log + ")");
  return status == 0 ? kOk : kCheckFailed;
}

namespace {

// The last lines of the console log: what a failed run said, where the terminal did not show it.
void print_tail(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  for (std::size_t k = all.size() > lines ? all.size() - lines : 0; k < all.size(); ++k)
    fmt::print(stderr, "{}\n", all[k]);
}

// The JSON and console log of a run: --out and beside it (X.json: X.console.txt), or a fresh folder
// under the temporary directory (kept: the run's record) when no --out was given.
void choose_files(BenchOptions& o) {
  if (o.out.empty()) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("pe-suite-bench-{}", getpid());
    std::filesystem::create_directories(dir);
    o.out = (dir / "bench.json").string();
  }
  if (!o.raw) o.console_log = std::filesystem::path(o.out).replace_extension(".console.txt").string();
}

int bench_with_summary(BenchOptions o) {
  choose_files(o);
  if (!o.raw)
    fmt::print("bench: timing '{}' ({} grid); Google Benchmark's rows go to {}\n", o.glob,
               o.quick ? "quick" : "full", o.console_log);
  std::fflush(stdout);
  int status = kOk;
  try {
    status = run_bench(o);
  } catch (const UsageError&) {
    if (!o.raw) print_tail(o.console_log, 20);
    throw;
  }
  if (status != kOk) {
    fmt::print(stderr, "bench: pe_bench failed{}\n", o.raw ? "" : "; the end of " + o.console_log + ":");
    if (!o.raw) print_tail(o.console_log, 20);
    return status;
  }
  std::vector<reports::BenchRecord> records;
  try {
    records = reports::bench_records(read_json_file(o.out, "bench"));
  } catch (const std::exception& e) {
    throw UsageError(std::string("bench: its JSON: ") + e.what());
  }
  fmt::print("{}", reports::bench_summary(records));
  fmt::print("\nJSON: {}{}\n", o.out, o.raw ? "" : "; Google Benchmark's console rows: " + o.console_log);
  return kOk;
}

}  // namespace

void add_bench(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("bench", "Benchmark every variant across the shape grid (Google Benchmark JSON)");
  auto o = std::make_shared<BenchOptions>();
  cmd->add_flag("--quick", o->quick,
                "The quick grid (3 repetitions; about 45 s on 2 cores) instead of the full one");
  cmd->add_option("--variant", o->glob, "Instances to time (glob)")->capture_default_str();
  cmd->add_option("--out", o->out,
                  "Write the JSON here (the console rows beside it, X.console.txt; default: a new folder in "
                  "the temporary directory)");
  cmd->add_flag("--raw", o->raw,
                "Google Benchmark's console rows on the terminal too, instead of in their file");
  cmd->add_option("pe_bench_args", o->extra,
                  "After --: passed to pe_bench (Google Benchmark's --benchmark_* flags, e.g. "
                  "--benchmark_filter=REGEX, --benchmark_repetitions=N)");
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([o, cmd, plugins, &exit_code] {
    check_output_paths(*cmd, {"--out"}, {});
    load_plugins(*plugins);
    exit_code = bench_with_summary(*o);
  });
}

}  // namespace pe::cli
