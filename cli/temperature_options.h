// The attention-temperature flags of check and export (--attn-temperature llama4|mistral,
// --attn-scale, --floor-scale, --beta) and their translation into a pe::AttnTemperature. Mistral's
// L is the scaling's --original-max-position: HF Ministral3 reads the same
// rope_parameters.original_max_position_embeddings as its YaRN. The values are checked by
// pe::validate, whose errors name the flag here.
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>

#include "pe/attn_temperature.h"
#include "pe/types.h"
#include "scaling_options.h"

namespace pe::cli {

// Defaults are pe::AttnTemperature's; `given` holds the flags given, which decide what is used.
struct TemperatureFlags {
  std::string type;  // "" or "none": no temperature
  double attn_scale = 0.1, beta = 0.1;
  std::int64_t floor_scale = 8192;
  std::set<std::string> given;
};

void add_temperature_options(CLI::App& cmd, TemperatureFlags& flags);
std::set<std::string> given_temperature_flags(const CLI::App& cmd);

// The temperature the flags describe. UsageError naming the flag for: an unknown type, a parameter
// flag without --attn-temperature or of the other type (--beta with llama4), mistral without
// --original-max-position, a value pe::validate rejects.
AttnTemperature to_attn_temperature(const TemperatureFlags& flags, const ScalingFlags& scaling);
// `scaling` without --original-max-position where only the mistral temperature reads it (a scaling
// method that does not would reject the flag as unused).
ScalingFlags scaling_flags_besides(ScalingFlags scaling, const AttnTemperature& t);
// UsageError when any temperature flag is given.
void reject_temperature_flags(const TemperatureFlags& flags, const std::string& why);

// "llama4 (attn_scale 0.1, floor_scale 8192)"; "none".
std::string describe_temperature(const AttnTemperature& t);
// The error model's words for budgets: "(6*2^-24 + 2*u_bf16) * t(p) * |x| (...)"; `magnitude` names
// what the gain multiplies ("|x|", "(|x_a| + |x_b|)").
std::string describe_gain_budget(DType out, const std::string& magnitude);

}  // namespace pe::cli
