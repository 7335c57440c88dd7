// The ALiBi flags shared by export and check (--heads, --max-bias, --alibi-slopes, --alibi-form,
// --queries, --keys, --slopes-only) and their translation into AlibiParams and positions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "pe/alibi.h"

namespace pe::cli {

struct AlibiFlags {
  std::int64_t heads = 0;
  double max_bias = 8;
  std::string slopes = "interpolated", form = "causal", queries, keys;
  bool slopes_only = false;
  std::set<std::string> given;  // the flags actually given (after parsing)
};

// Adds the flags to `cmd`, storing into `flags` (which must outlive the parse).
void add_alibi_options(CLI::App& cmd, AlibiFlags& flags);
// Records which flags `cmd` was given into flags.given.
void note_given_alibi_flags(const CLI::App& cmd, AlibiFlags& flags);
// UsageError when any ALiBi flag is given: they apply to --family alibi only.
void reject_alibi_flags(const AlibiFlags& flags, const std::string& why);
// The parameters for `heads` heads; UsageError naming --alibi-slopes or --alibi-form for an unknown
// value, or the flag of the parameter AlibiPlan rejects (--heads, --max-bias).
AlibiParams to_alibi_params(const AlibiFlags& flags, std::int64_t heads);
// --queries / --keys "A:B"; UsageError naming the flag for a missing, empty or inverted range.
std::vector<std::int64_t> alibi_positions(const std::string& range, const char* flag);

}  // namespace pe::cli
