// The ALiBi flags shared by export and check (--heads, --max-bias, --alibi-slopes, --alibi-form,
// --queries, --keys, --slopes-only) into check::AlibiOptions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/check/options.h"

namespace pe::cli {

struct AlibiFlags : check::AlibiOptions {
  std::string queries_range, keys_range;  // "A:B", read into queries and keys by note_given_alibi_flags
};

// Adds the flags to `cmd`, storing into `flags` (which must outlive the parse).
void add_alibi_options(CLI::App& cmd, AlibiFlags& flags);
// After parsing: which flags `cmd` was given, and the --queries/--keys ranges (UsageError naming the flag
// for an empty or inverted range).
void note_given_alibi_flags(const CLI::App& cmd, AlibiFlags& flags);
// The conversions under the shared flag names.
void reject_alibi_flags(const AlibiFlags& flags, const std::string& why);
AlibiParams to_alibi_params(const AlibiFlags& flags, std::int64_t heads);

}  // namespace pe::cli
