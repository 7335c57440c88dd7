// The ALiBi flags shared by export and check (--heads, --max-bias, --alibi-slopes, --alibi-form,
// --queries, --keys, --slopes-only) into check::AlibiSpec.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/check/spec.h"

namespace pe::cli {

// What CLI11 parses into; `spec` holds the flags given, typed, once read_alibi_flags has run.
struct AlibiFlags {
  std::string slopes = "interpolated", form = "causal";
  std::string queries_range, keys_range;  // "A:B"
  bool slopes_only = false;
  check::AlibiSpec spec;  // heads and max_bias straight from the parse
};

// Adds the flags to `cmd`, storing into `flags` (which must outlive the parse).
void add_alibi_options(CLI::App& cmd, AlibiFlags& flags);
// After parsing: the flags `cmd` was given into flags.spec (UsageError naming the flag for an empty or
// inverted range, an unknown slope rule or form).
void read_alibi_flags(const CLI::App& cmd, AlibiFlags& flags);

// The conversions under the shared flag names.
void reject_alibi_flags(const AlibiFlags& flags, const std::string& why);
AlibiParams to_alibi_params(const AlibiFlags& flags, std::int64_t heads);

}  // namespace pe::cli
