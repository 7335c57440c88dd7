// pe_bench: Google Benchmark over the registry. Our flags come first and are removed before
// Google Benchmark sees the rest:
//   --mode smoke|quick|report   grid and repetitions (default quick)
//   --variant GLOB              instances to time (default every one)
//   --out FILE                  JSON results (same as --benchmark_out=FILE --benchmark_out_format=json)
//   --slowdown-for-test GLOB    matching instances run their kernel twice per iteration (tests the
//                               regression gate; never use for real measurements)
// The plugins in $PE_PLUGINS (pe/plugin.h) are loaded first, their kernels timed beside the others.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "grid.h"
#include "pe/harness/plugin.h"
#include "plain_console.h"

int main(int argc, char** argv) {
  // A fixture is rebuilt whenever interleaved repetitions switch benchmarks (fixture_cache.h), up to 200 MB
  // each time. Freed blocks stay in the heap (no mmap for large ones, no trimming), so that a rebuild reuses
  // resident pages: fresh ones, faulted in and zeroed by the kernel, were 40% of the quick RoPE grid's CPU
  // time. The timed calls never allocate, so they run on resident pages either way.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  try {
    pe::harness::load_plugins_from_env();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pe_bench: %s\n", e.what());
    return 2;
  }
  pe::bench::Options options;
  std::vector<std::string> rest = {argv[0]};
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--mode" && has_value) {
      const std::string m = argv[++i];
      if (m == "smoke") {
        options.mode = pe::bench::Mode::Smoke;
      } else if (m == "quick") {
        options.mode = pe::bench::Mode::Quick;
      } else if (m == "report") {
        options.mode = pe::bench::Mode::Report;
      } else {
        std::fprintf(stderr, "pe_bench: --mode: expected smoke, quick or report, got '%s'\n", m.c_str());
        return 2;
      }
    } else if (a == "--variant" && has_value) {
      options.glob = argv[++i];
    } else if (a == "--slowdown-for-test" && has_value) {
      options.slowdown_glob = argv[++i];
    } else if (a == "--out" && has_value) {
      out = argv[++i];
    } else {
      rest.push_back(a);
    }
  }
  // Defaults for the mode, before the user's own --benchmark_* flags so that theirs win. Quick: 10 ms of CPU
  // per repetition (Google Benchmark times up to 1.4x that): its ~490 benchmarks x 3 repetitions take 45 s
  // of CPU here, 20 ms took 65 s (docs/reports.md: the main job's phases).
  const std::string reps =
      "--benchmark_repetitions=" + std::to_string(pe::bench::repetitions_for(options.mode));
  const std::string min_time = options.mode == pe::bench::Mode::Smoke   ? "--benchmark_min_time=0.001"
                               : options.mode == pe::bench::Mode::Quick ? "--benchmark_min_time=0.01"
                                                                        : "--benchmark_min_time=0.03";
  rest.insert(rest.begin() + 1, {reps, min_time});
  // Repetitions of different benchmarks interleaved in random order, so that they sample the
  // machine's drift over the run instead of one moment: back-to-back repetitions share it, and a
  // comparison of two runs then finds "significant" changes that are only the machine's.
  if (options.mode != pe::bench::Mode::Smoke)
    rest.insert(rest.begin() + 1, "--benchmark_enable_random_interleaving=true");
  if (!out.empty()) rest.insert(rest.begin() + 1, {"--benchmark_out=" + out, "--benchmark_out_format=json"});
  std::vector<char*> args;
  for (std::string& s : rest) args.push_back(s.data());
  int n = static_cast<int>(args.size());

  // No Google Benchmark MemoryManager: Debian's 1.7.1 keeps a pointer to its result past the result's
  // life (upstream #1939) and its JSON reporter read that freed memory, garbage at best and a segfault
  // at the end of a report run here; allocs_per_call comes from add_counters' own counted call.
  pe::bench::stamp_context();
  if (pe::bench::register_grid(options) == 0) {
    std::fprintf(stderr, "pe_bench: --variant: no instance matches '%s'\n", options.glob.c_str());
    return 2;
  }
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
  // Our console unless another format was asked for (plain_console.h: counters in their own units).
  bool own_format = false, tabular = false;
  for (const std::string& a : rest) {
    own_format = own_format || (a.starts_with("--benchmark_format=") && a != "--benchmark_format=console");
    tabular = tabular || a == "--benchmark_counters_tabular=true";
  }
  const int color = isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color : 0;
  pe::bench::PlainConsole console(static_cast<benchmark::ConsoleReporter::OutputOptions>(
      color | (tabular ? benchmark::ConsoleReporter::OO_Tabular : 0)));
  if (own_format) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    benchmark::RunSpecifiedBenchmarks(&console);
  }
  benchmark::Shutdown();
  return 0;
}
