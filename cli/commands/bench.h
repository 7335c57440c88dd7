// The benchmark step shared by `bench` and `run`.
#pragma once

#include <string>
#include <vector>

namespace pe::cli {

struct BenchOptions {
  bool quick = false;
  bool raw = false;  // bench: Google Benchmark's console on the terminal, not in a file
  std::string glob = "*", out;
  std::string console_log;         // where Google Benchmark's console table goes (empty: stdout)
  std::vector<std::string> extra;  // passed on to pe_bench
};

// Runs pe_bench; kOk, or kCheckFailed when it failed.
int run_bench(const BenchOptions& options);

}  // namespace pe::cli
