#include "sinusoidal_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "args.h"
#include "common.h"
#include "form_options.h"
#include "names.h"
#include "pe/check/npy.h"
#include "pe/plan.h"

namespace pe::cli {
namespace {

constexpr const char* kSinusoidalFlags[] = {"--flip-sin-to-cos",
                                            "--downscale-freq-shift",
                                            "--scale",
                                            "--padding-idx",
                                            "--grid",
                                            "--base-size",
                                            "--interpolation-scale",
                                            "--temporal-interpolation-scale",
                                            "--extra-tokens"};

std::vector<std::int64_t> grid_sizes(const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(parse_int(text.substr(at, comma - at), "--grid"));
    at = comma + 1;
  }
  if (out.size() != 2 && out.size() != 3)
    throw UsageError("--grid: expected H,W or T,H,W, got '" + text + "'");
  return out;
}

}  // namespace

void add_sinusoidal_options(CLI::App& cmd, SinusoidalFlags& f) {
  cmd.add_flag("--flip-sin-to-cos", f.flip_sin_to_cos,
               "Sinusoidal: each pair's cos first ([cos | sin], diffusers' flip_sin_to_cos)");
  cmd.add_option("--downscale-freq-shift", f.downscale_freq_shift,
                 "Sinusoidal: ω_i = base^(-i/(dim/2 - S)); 0 the paper's (default), 1 fairseq's, Whisper's, "
                 "tensor2tensor's (diffusers' freq_shift)");
  cmd.add_option("--scale", f.scale, "Sinusoidal: the angle is scale·t·ω_i (diffusers' scale; default 1)");
  cmd.add_option("--padding-idx", f.padding_idx,
                 "Sinusoidal: the row of this position is all zeros (fairseq's padding_idx)");
  cmd.add_option("--grid", f.grid,
                 "Sinusoidal: a 2-D H,W or 3-D T,H,W grid as diffusers and MAE build it (rows are its cells, "
                 "row-major; no positions)");
  cmd.add_option("--base-size", f.base_size, "Sinusoidal 2-D grid: coordinates i/(n/base_size) (default: i)");
  cmd.add_option("--interpolation-scale", f.interpolation_scale,
                 "Sinusoidal grid: coordinates divided by it (spatial, 3-D)");
  cmd.add_option("--temporal-interpolation-scale", f.temporal_interpolation_scale,
                 "Sinusoidal 3-D grid: frame coordinates divided by it");
  cmd.add_option("--extra-tokens", f.extra_tokens, "Sinusoidal 2-D grid: zero rows before the cells (cls)");
}

void read_sinusoidal_flags(const CLI::App& cmd, SinusoidalFlags& f) {
  check::SinusoidalSpec& s = f.spec;
  const auto given = [&cmd](const char* flag, auto& field, const auto& value) {
    if (cmd.count(flag) > 0) field = value;
  };
  given("--flip-sin-to-cos", s.flip_sin_to_cos, f.flip_sin_to_cos);
  given("--downscale-freq-shift", s.downscale_freq_shift, f.downscale_freq_shift);
  given("--scale", s.scale, f.scale);
  given("--padding-idx", s.padding_idx, f.padding_idx);
  if (cmd.count("--grid") > 0) s.grid = grid_sizes(f.grid);
  given("--base-size", s.base_size, f.base_size);
  given("--interpolation-scale", s.interpolation_scale, f.interpolation_scale);
  given("--temporal-interpolation-scale", s.temporal_interpolation_scale, f.temporal_interpolation_scale);
  given("--extra-tokens", s.extra_tokens, f.extra_tokens);
}

void reject_sinusoidal_flags(const CLI::App& cmd, const std::string& why, std::string_view allowed) {
  for (const char* flag : kSinusoidalFlags)
    if (cmd.count(flag) > 0 && flag != allowed) throw UsageError(std::string(flag) + ": " + why);
}

bool holds_real_positions(const std::string& file) {
  if (!file.ends_with(".npy")) return false;
  const check::NpyArray a = check::read_npy(file);
  return !a.integer && !std::all_of(a.values.begin(), a.values.end(), [](double v) {
    return v >= 0 && v <= static_cast<double>(kMaxPosition) && v == std::floor(v);
  });
}

void sinusoidal_positions(const std::string& range, const std::string& file, bool grid,
                          check::SinusoidalRequest& r) {
  if (grid) {
    if (!range.empty() || !file.empty())
      throw UsageError("--grid: a grid's rows are its cells; give no --positions or --positions-file");
    return;
  }
  if (range.empty() && file.empty()) return;  // the engine names what is missing (a config may give a grid)
  if (holds_real_positions(file)) {
    const check::NpyArray a = check::read_npy(file);
    {
      if (range.empty() == false) throw UsageError("--positions or --positions-file: give exactly one");
      if (a.values.empty()) throw UsageError("--positions-file: no positions in '" + file + "'");
      for (std::size_t i = 0; i < a.values.size(); ++i)
        if (!std::isfinite(a.values[i]))
          throw UsageError(fmt::format("--positions-file: {} holds {} at {}, not a finite position", file,
                                       a.values[i], i));
      r.real_positions = a.values;
      return;
    }
  }
  r.positions = positions_of(range, file);
}

}  // namespace pe::cli
