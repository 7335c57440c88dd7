// What the pe-suite subcommands share: exit codes, argument errors, position lists.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pe::cli {

// 0: everything checked passed; 1: a check failed; 2: bad usage or input.
enum ExitCode : int { kOk = 0, kCheckFailed = 1, kUsage = 2 };

// A bad command-line argument; the message names it ("--positions: ...").
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "A:B" is the half-open range [A, B) (Python's slice); a file holds whitespace-separated integers.
std::vector<std::int64_t> positions_from(const std::string& range, const std::string& file);

// The registry as a table or JSON (pe-suite list).
void print_list(bool json);

// Each subcommand registers itself and stores its exit code in `exit_code` when it runs.
void add_list(CLI::App& app, int& exit_code);
void add_verify(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_export(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);

}  // namespace pe::cli
