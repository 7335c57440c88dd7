// Which position axis each rotary pair read, read back from M-RoPE data (issue 33: M-RoPE sections in the
// wrong order): per pair, every sampled row's angle against θ_j·p for each axis's position p; the axis
// that every row agrees with, within the angle tolerance position recovery uses, where the axes' angles
// differ by more than that. What sections these say is explain/section_fit's question.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/plan.h"

namespace pe::check {

struct RecoveredAxes {
  std::vector<std::optional<std::size_t>>
      axis;  // per pair; nullopt: undetermined (no row tells, or none fits)
  // Per pair, a bit per axis that every sampled row agrees with (0: none does, or no row carries the pair):
  // an undetermined pair fitting several axes reads one of them, the data cannot say which.
  std::vector<unsigned> fitting;
  // The largest |p_a - p_b| over the sampled tokens, at [a * n_axes + b]: 0 where two axes coincide.
  std::vector<std::int64_t> apart;
  std::size_t n_axes = 0, determined = 0, tokens = 0, heads = 0;
};

// At most `max_tokens` tokens spread over the batch, every head of each; the plan's frequencies as given.
// Nothing is read (no pair determined) unless the plan is M-RoPE with the data's number of axes.
RecoveredAxes recover_axes(const RopeData& d, const RopePlan& plan, std::size_t max_tokens = 64);

}  // namespace pe::check
