// What the pe-suite subcommands share: exit codes, argument errors, position lists.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "args.h"
#include "pe/batch.h"

namespace pe::cli {

// 0: everything checked passed; 1: a check failed; 2: bad usage or input.
enum ExitCode : int { kOk = 0, kCheckFailed = 1, kUsage = 2 };

// The number of values an output of these dimensions holds, e.g. {{"--positions", n}, {"--dim", d}}.
// Throws UsageError naming the dimensions and the size when the product overflows, or when
// `bytes_per_value` times it exceeds this machine's physical memory: refused before allocating.
std::size_t output_values(std::initializer_list<std::pair<const char*, std::size_t>> dims,
                          std::size_t bytes_per_value);

// "A:B" is the half-open range [A, B) (Python's slice); a file holds whitespace-separated integers,
// or is a .npy array of them (any integer type, or floats holding integers).
std::vector<std::int64_t> positions_from(const std::string& range, const std::string& file);

// The whole file; throws UsageError naming `what` when it cannot be read.
std::string read_text(const std::string& path, const std::string& what);

// A JSON file (Google Benchmark's bare NaN/inf words read as null); UsageError naming `what` when it
// cannot be read or parsed.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

// Writes text to path (its folder must exist) through a temporary file renamed over it, so that a run
// killed mid-write leaves the old file or none, never a part; says so on stdout unless `quiet`. Throws
// UsageError when it cannot.
void write_text(const std::string& path, const std::string& text, bool quiet = false);

// For an unsigned option (a seed): a value with a minus sign is refused with the value named, which CLI11's
// own conversion would wrap (-1 to 2^64 - 1).
CLI::Validator non_negative_integer();

// Refuses, before any work, an output flag's path whose folder does not exist (never created silently) or
// that is one of the command's own input files (a --json onto --input would overwrite the data). Each flag
// is checked only when given; `suffixes`: other files an output writes beside it (export's "X.json").
void check_output_paths(const CLI::App& cmd, std::initializer_list<const char*> outputs,
                        std::initializer_list<const char*> inputs,
                        std::initializer_list<const char*> suffixes = {});

// Runs a program and waits: extra environment entries ("NAME=value") replace inherited ones;
// stdout and stderr go to `stdout_path` when given. Returns the exit status (128+signal when killed).
// `give_up`, when given, is asked every 50 ms while the program runs; true kills it (SIGKILL).
int spawn_and_wait(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                   const std::string& stdout_path = "", const std::function<bool()>& give_up = {});

// A helper program pe-suite runs (pe_props, pe_bench), found from this executable's own folder, so that
// a build tree and an installed prefix both work without baked-in paths: beside it, in
// ../libexec/pe-suite (installed), or in the build tree's ../properties and ../bench. nullopt when none
// exists (a build without tests or benchmarks).
std::optional<std::string> helper_executable(const std::string& name);

// The registry as a table or JSON (pe-suite list).
void print_list(bool json);

// Each subcommand registers itself and stores its exit code in `exit_code` when it runs.
void add_list(CLI::App& app, int& exit_code);
void add_verify(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_export(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);
void add_check(CLI::App& app, int& exit_code);
void add_compare(CLI::App& app, int& exit_code);
void add_census(CLI::App& app, int& exit_code);
void add_report(CLI::App& app, int& exit_code);

}  // namespace pe::cli
