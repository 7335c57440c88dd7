// pe-suite bench: the benchmark grid (report mode: the full grid with 9 repetitions; --quick: the
// quick grid), run by the pe_bench binary built beside this one.
#include "bench.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "common.h"
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
  if (status == 2) throw UsageError("bench: pe_bench rejected its arguments (see above)");
  return status == 0 ? kOk : kCheckFailed;
}

void add_bench(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("bench", "Benchmark every variant across the shape grid (Google Benchmark JSON)");
  auto o = std::make_shared<BenchOptions>();
  cmd->add_flag("--quick", o->quick, "The quick grid (under 2 minutes) instead of the full one");
  cmd->add_option("--variant", o->glob, "Instances to time (glob)")->capture_default_str();
  cmd->add_option("--out", o->out, "Write the JSON here");
  cmd->add_option("pe_bench_args", o->extra,
                  "After --: passed to pe_bench (Google Benchmark's --benchmark_* flags, e.g. "
                  "--benchmark_filter=REGEX, --benchmark_repetitions=N)");
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([o, cmd, plugins, &exit_code] {
    check_output_paths(*cmd, {"--out"}, {});
    load_plugins(*plugins);
    exit_code = run_bench(*o);
  });
}

}  // namespace pe::cli
