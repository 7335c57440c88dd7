// The attention-temperature flags of check and export (--attn-temperature llama4|mistral, --attn-scale,
// --floor-scale, --beta) into check::TemperatureOptions; mistral's L is the scaling's
// --original-max-position (HF Ministral3 reads the same key as its YaRN).
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>

#include "pe/check/options.h"
#include "scaling_options.h"

namespace pe::cli {

using TemperatureFlags = check::TemperatureOptions;

void add_temperature_options(CLI::App& cmd, TemperatureFlags& flags);
// The canonical names of the temperature flags `cmd` was given.
std::set<std::string> given_temperature_flags(const CLI::App& cmd);

// The conversions under the shared flag names.
AttnTemperature to_attn_temperature(const TemperatureFlags& flags, const ScalingFlags& scaling);
void reject_temperature_flags(const TemperatureFlags& flags, const std::string& why);

}  // namespace pe::cli
