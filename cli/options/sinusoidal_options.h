// The sinusoidal table's flags under diffusers' names, shared by check and export (--flip-sin-to-cos,
// --downscale-freq-shift, --scale, --padding-idx, --grid, --base-size, --interpolation-scale,
// --temporal-interpolation-scale, --extra-tokens; --max-period is --base) into check::SinusoidalSpec.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "pe/check/check.h"
#include "pe/check/spec.h"

namespace pe::cli {

// What CLI11 parses into; `spec` holds the flags given, typed, once read_sinusoidal_flags has run (base and
// layout are the shared --base and --layout, read by the command).
struct SinusoidalFlags {
  std::string grid;  // "H,W" or "T,H,W"
  double downscale_freq_shift = 0, scale = 1, base_size = 0, interpolation_scale = 1,
         temporal_interpolation_scale = 1;
  std::int64_t padding_idx = 0, extra_tokens = 0;
  bool flip_sin_to_cos = false;
  check::SinusoidalSpec spec;
};

void add_sinusoidal_options(CLI::App& cmd, SinusoidalFlags& flags);
// After parsing: the flags `cmd` was given into flags.spec (UsageError naming --grid for a malformed list).
void read_sinusoidal_flags(const CLI::App& cmd, SinusoidalFlags& flags);
// UsageError naming the first of these flags given, `why` after it (another family).
void reject_sinusoidal_flags(const CLI::App& cmd, const std::string& why, std::string_view allowed = "");

// A sinusoidal request's positions: a range or an integer file as every family reads them, or a float .npy
// of real positions (diffusion timesteps; a file of whole numbers in [0, 2^53] reads as integers); none
// with a grid, none given left to the engine (a config's grid needs none).
void sinusoidal_positions(const std::string& range, const std::string& file, bool grid,
                          check::SinusoidalRequest& r);
// Whether `file` is a float .npy that holds a number other than a whole one in [0, 2^53].
bool holds_real_positions(const std::string& file);

}  // namespace pe::cli
