// The RoPE scaling flags shared by export, check and census (--scaling, --factor, ...,
// --partial-rotary-factor) into check::ScalingOptions, whose conversion (pe/check/options.h) rejects
// what the core would ignore and names the flag.
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>

#include "names.h"
#include "pe/check/options.h"

namespace pe::cli {

using ScalingFlags = check::ScalingOptions;

// Adds every flag to `cmd`, storing into `flags` (which must outlive the parse).
void add_scaling_options(CLI::App& cmd, ScalingFlags& flags);
// The canonical names of the scaling flags `cmd` was given (after parsing).
std::set<std::string> given_scaling_flags(const CLI::App& cmd);

// The conversions under the shared flag names.
RopeScaling to_rope_scaling(const ScalingFlags& flags);
void reject_scaling_flags(const ScalingFlags& flags, const std::string& why);
RopePlan rope_plan(const RopeParams& params);

}  // namespace pe::cli
