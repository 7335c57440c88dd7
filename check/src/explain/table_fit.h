// The diagnosis of a sinusoidal table that fails by more than rounding (issue 49): each switch diffusion,
// audio and vision code sets, flipped alone or with the others (flip_sin_to_cos, the layout,
// downscale_freq_shift 0 and 1), the positions off by one or two, timesteps scaled by 1000 or not, a grid's
// axes swapped or its cells flattened in the other order, the rows and channels exchanged (the memory
// [dim, rows]), a grid axis's coordinates scaled (its ladder read back alone: explain/axis_ladders.h); and
// the frequencies read back from the data, each pair's from its angles (unwrapped from the smallest position
// up), fitted as a ladder ω_i = s·b^(−i/den): the base that fits the given shift and the shift that fits the
// given base, at any base, become candidates too. Models in long double; the residual is the max |data −
// model| over a sample of rows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/check/report.h"
#include "pe/check/spec.h"
#include "pe/harness/sinusoidal_rows.h"

namespace pe::check {

struct TableDiagnosis {
  std::vector<Fit> fits;  // best first; each candidate's words its convention's label
  Convention given;       // the given candidate (label empty: "the conventions given")
  std::vector<std::string> notes;
  std::vector<Finding> claims;
  std::int64_t max_angle = 0;  // the best fit's largest |scale·t|, rounded up (the fit tolerance's)
};

// A candidate model: the rows it builds, read against the table as given, or with its rows and channels
// exchanged (the memory [dim, rows] read as [rows, dim]: element (r, c) at c·rows + r; read in place, a
// large table is not copied for a diagnosis that samples 64 rows).
struct TableCandidate {
  std::string label;
  harness::SinusoidalRows rows;
  bool exchanged = false;
};

// `table` is [rows, dim] as `given` lays it out; `spec` is what the caller gave (a grid's sizes).
TableDiagnosis diagnose_table(std::span<const double> table, const harness::SinusoidalRows& given,
                              const SinusoidalSpec& spec);

// The ladder read back from one block's pairs (under its layout and flip): ω_i ≈ exp(log_scale − i·slope)
// (slope = ln b / den), over the `pairs` pairs whose angles unwrap consistently; nullopt where fewer than two
// do.
struct Ladder {
  double log_scale = 0, slope = 0;
  std::size_t pairs = 0;
  double deviation = 0;  // the largest |ln ω_i − the line| of the pairs read
};
std::optional<Ladder> read_ladder(std::span<const double> table, const harness::SinusoidalRows& rows,
                                  std::size_t block);

}  // namespace pe::check
