// libFuzzer target: the command line's value parsers (args.h) and CLI11 parsing of options shaped
// like pe-suite's, on arbitrary argument vectors (NUL-separated). Bad input must end in
// UsageError or CLI11's ParseError, never a crash or another exception.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "args.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"pe-suite"};
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  args.push_back(cur);

  for (const std::string& a : args) {
    try {
      const auto [lo, hi] = pe::cli::parse_range(a, "--positions");
      if (lo < 0 || hi <= lo) __builtin_trap();
    } catch (const pe::cli::UsageError&) {
    }
    try {
      const double f = pe::cli::parse_fraction(a, "--threshold");
      if (!(f >= 0 && f < 10)) __builtin_trap();
    } catch (const pe::cli::UsageError&) {
    }
    try {
      const auto [i, n] = pe::cli::parse_shard(a, "--shard");
      if (i >= n) __builtin_trap();
    } catch (const pe::cli::UsageError&) {
    }
  }

  CLI::App app{"fuzz", "pe-suite"};
  app.require_subcommand(1);
  auto* check = app.add_subcommand("check");
  std::string table, family, positions;
  std::int64_t dim = 0;
  double base = 1e4, max_abs = 0;
  bool heads_first = false;
  check->add_option("TABLE", table);
  check->add_option("--family", family)->required();
  check->add_option("--positions", positions);
  check->add_option("--dim", dim);
  check->add_option("--base", base);
  check->add_option("--max-abs", max_abs);
  check->add_flag("--heads-first", heads_first);
  auto* compare = app.add_subcommand("compare");
  std::string base_file, new_file, threshold;
  double alpha = 0.05;
  compare->add_option("BASE", base_file)->required();
  compare->add_option("NEW", new_file)->required();
  compare->add_option("--threshold", threshold);
  compare->add_option("--alpha", alpha);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
  }
  return 0;
}
