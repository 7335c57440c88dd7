// What each rotary pair's frequency was, read back from the data (issue 32's recovery): a row's pair was
// rotated by the angle of the 2×2 map from (x_a, x_b) to (y_a, y_b) and scaled by |y|/|x|; the rows at
// different positions give the frequency θ̂_j that turns p into that angle, unwrapped from the nearest
// positions outward, with the interval every row agrees with. Then the pairs whose θ̂_j / θ_j differ from
// the given plan's, in runs ("pairs 0-20 as given; pairs 21-63 divided by 8"). A measurement, not a match
// against a list: it names ratios no list holds. Each pair is read at its own axis's positions (text RoPE's
// one axis; an axial form's, explain/axial_readback.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/plan.h"

namespace pe::check {

struct RecoveredPair {
  std::size_t pair = 0;
  // θ̂_j and the interval [lo, hi] in which every supporting row's angle fits within the tolerance;
  // nullopt: undetermined (rows at one position, inputs near zero, two frequencies fit, none does, or the
  // interval spans more than 5% of θ̂: too little rotation at these positions to tell).
  std::optional<double> theta;
  double lo = 0, hi = 0;
  double gain = 0;                  // the median of |y|/|x| over the rows (0 when no row carries the pair)
  double gain_lo = 0, gain_hi = 0;  // its smallest and largest over the rows
  std::size_t rows = 0;             // tokens that support θ̂ (each with every head)
};

struct RecoveredFrequencies {
  std::vector<RecoveredPair> pairs;
  std::size_t tokens = 0;  // tokens read (distinct positions)
  double unit = 0;         // the data type's unit roundoff (how far one row's gain may stray)
};

// At most `max_tokens` tokens spread over the batch (and the second token, so that two positions are near),
// every head of each; a row's angle may be off by the data type's rounding and a float32 angle's, as
// position recovery allows.
RecoveredFrequencies recover_frequencies(const RopeData& d, const RopePlan& plan,
                                         std::size_t max_tokens = 64);

// The recovered table against the given plan's frequencies and attention factor, in runs of pairs:
// "pairs 0-20 as given; pairs 21-63 at 1/8 of the given frequency (θ̂/θ 0.1250)". Empty when every
// determined pair is as given or none is determined.
std::string frequency_pattern(const RecoveredFrequencies& r, const RopePlan& plan);

}  // namespace pe::check
