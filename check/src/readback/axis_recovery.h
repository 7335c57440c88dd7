// Which position axis each rotary pair read, read back from M-RoPE data (issue 33: M-RoPE sections in the
// wrong order): per pair, every sampled row's angle against θ_j·p for each axis's position p; the axis
// that every row agrees with, within the angle tolerance position recovery uses, where the axes' angles
// differ by more than that. Then the sections (either layout's rule) that every determined pair agrees
// with: a claim only when one set of sections does and it is not the given one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/plan.h"

namespace pe::check {

struct RecoveredAxes {
  std::vector<std::optional<std::size_t>>
      axis;  // per pair; nullopt: undetermined (no row tells, or none fits)
  std::size_t determined = 0, tokens = 0;
  std::string words, support;  // "M-RoPE sections [8, 12, 12] (given [12, 12, 8])"; empty: as given
  bool fits = false;           // a claim: exactly one set of sections holds every determined pair
};

// At most `max_tokens` tokens spread over the batch, every head of each; the plan's frequencies as given.
RecoveredAxes recover_axes(const RopeData& d, const RopePlan& plan, std::size_t max_tokens = 64);

}  // namespace pe::check
