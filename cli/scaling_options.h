// The RoPE scaling flags shared by export, check and census (--scaling, --factor, ...,
// --partial-rotary-factor) and their translation into a pe::RopeScaling. The CLI rejects what the
// core would silently ignore (a flag the chosen method does not read) or accept as "absent" (a
// method's required flag missing); the values themselves are checked by RopePlan, whose errors
// rope_plan() reports under the flag's name.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "pe/errors.h"
#include "pe/plan.h"
#include "pe/rope_scaling.h"

namespace pe::cli {

// What the command line said. Defaults are HF's; `given` holds the flags actually given
// ("--factor"), which is what decides whether a flag is used, never its value.
struct ScalingFlags {
  std::string scaling = "none";
  double factor = 1, beta_fast = 32, beta_slow = 1, mscale = 0, mscale_all_dim = 0, attention_factor = 0;
  double low_freq_factor = 1, high_freq_factor = 4, partial_rotary_factor = 1;
  std::int64_t original_max_position = 0, seq_len = 0;
  std::string truncate = "true", short_factors, long_factors;  // the lists: 1-D f32/f64 .npy files
  // The lists in memory (--hf-config's rope_scaling.short_factor), used where no .npy path was given.
  std::vector<double> short_factor_list, long_factor_list;
  std::set<std::string> given;
};

// Adds every flag to `cmd`, storing into `flags` (which must outlive the parse).
void add_scaling_options(CLI::App& cmd, ScalingFlags& flags);
// The scaling flags `cmd` was given (after parsing): what add_scaling_options registered.
std::set<std::string> given_scaling_flags(const CLI::App& cmd);

// The scaling the flags describe. UsageError naming the flag for: an unknown method, a flag the
// method does not use, a missing --factor (every method but none) or --original-max-position
// (dynamic, yarn, llama3, longrope), --mscale without --mscale-all-dim (HF ignores it alone),
// --truncate not true/false, a factor list that is not a 1-D float .npy.
RopeScaling to_rope_scaling(const ScalingFlags& flags);

// UsageError when any scaling flag (or --partial-rotary-factor) is given: they apply to RoPE only.
void reject_scaling_flags(const ScalingFlags& flags, const std::string& why);

// The rotary dimension: `rotary_dim` (0: all of head_dim) or, with --partial-rotary-factor,
// HF's int(head_dim·F). `rotary_flag` names the explicit option, which conflicts with the factor.
std::int64_t rotary_dim_for(const ScalingFlags& flags, std::int64_t head_dim, std::int64_t rotary_dim,
                            const std::string& rotary_flag);

// RopePlan(params), with an InvalidArgument about a scaling parameter turned into a UsageError
// that names its flag ("--factor: factor must be finite and > 0, got 0").
RopePlan rope_plan(const RopeParams& params);
// The flag for a parameter InvalidArgument names ("beta_fast" -> "--beta-fast"); "" when none.
std::string flag_for_parameter(const std::string& parameter);
// Throws `e` again, as a UsageError "--flag: message" when its parameter has a flag.
[[noreturn]] void rethrow_with_flag(const InvalidArgument& e);

// One line for the command's header: "yarn (factor 4, original_max_position 4096; attention 1.14)".
std::string describe_scaling(const RopeScaling& s, const RopePlan& plan);

}  // namespace pe::cli
