// The gain flags: the attention temperature's of check and export (--attn-temperature llama4|mistral,
// --attn-scale, --floor-scale, --beta) into check::TemperatureSpec, mistral's L the scaling's
// --original-max-position (HF Ministral3 reads the same key as its YaRN); and check's xPos
// (--xpos-scale-base,
// --xpos-centre, --xpos-keys) into check::XPosSpec.
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>

#include "pe/check/spec.h"
#include "scaling_options.h"

namespace pe::cli {

// What CLI11 parses into; `spec` holds the flags given, typed, once read_temperature_flags has run.
struct TemperatureFlags {
  std::string type;
  check::TemperatureSpec spec;  // the numbers, straight from the parse
  check::XPosSpec xpos;         // check's only
  bool xpos_keys = false;
};

void add_temperature_options(CLI::App& cmd, TemperatureFlags& flags);
void add_xpos_options(CLI::App& cmd, TemperatureFlags& flags);
// After parsing: the flags `cmd` was given into flags.spec (an unknown temperature refused by name).
void read_temperature_flags(const CLI::App& cmd, TemperatureFlags& flags);

// The conversions under the shared flag names.
void reject_temperature_flags(const TemperatureFlags& flags, const std::string& why);

}  // namespace pe::cli
