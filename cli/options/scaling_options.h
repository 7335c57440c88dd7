// The RoPE scaling flags shared by export, check and census (--scaling, --factor, ...,
// --partial-rotary-factor), read after parsing into the typed check::ScalingSpec (pe/check/spec.h), whose
// conversion rejects what the core would ignore and names the flag.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "names.h"
#include "pe/check/spec.h"

namespace pe::cli {

// What CLI11 parses into: the numbers straight into `spec` (empty when not given), the words and files
// as text until read_scaling_flags has run.
struct ScalingFlags {
  std::string scaling = "none", truncate = "true", longrope_switch = "per-sequence",
              dynamic_semantics = "live", yarn_attention = "replace";
  std::string short_factors, long_factors;  // longrope's lists as 1-D f32/f64 .npy files
  check::ScalingSpec spec;
};

// Adds every flag to `cmd`, storing into `flags` (which must outlive the parse).
void add_scaling_options(CLI::App& cmd, ScalingFlags& flags);
// After parsing: the flags `cmd` was given into flags.spec (a method's name or truncate that is no such
// value refused, naming the flag; the factor lists read from their files when the method reads them).
void read_scaling_flags(const CLI::App& cmd, ScalingFlags& flags);

// The conversions under the shared flag names.
RopeScaling to_rope_scaling(const check::ScalingSpec& spec);
void reject_scaling_flags(const ScalingFlags& flags, const std::string& why);
RopePlan rope_plan(const RopeParams& params);

}  // namespace pe::cli
