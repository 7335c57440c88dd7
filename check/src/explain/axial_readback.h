// Axial RoPE's ladders read back one axis at a time (issue 50): axis a's pair k turns by θ^(-2k/D_a), so each
// determined pair k >= 1 of the recovered frequencies (readback/frequency_recovery.h) bounds ln θ / D_a, and
// the axis's pairs together give it as an interval. Where the interval holds the given ratio the axis is as
// given; elsewhere it is named: as a ladder over another dim where an even one fits the interval, else as
// another base at its own dim. A measurement, not a list: it names the base 256 on one axis, or a dim of
// 40, that no candidate holds.
#pragma once

#include <string>
#include <vector>

#include "pe/plan.h"
#include "readback/frequency_recovery.h"

namespace pe::check {

struct AxisLadderReading {
  std::string words;    // "axis 0's base 256 (given 10000): θ^(-2k/16) read back at θ = 256"
  std::string support;  // the pairs read and the interval they give
};

// One reading per axis whose ladder is determined (at least two pairs k >= 1, its pair 0 unscaled) and not
// as given; nothing for a plan that is not axial.
std::vector<AxisLadderReading> read_axis_ladders(const RecoveredFrequencies& r, const RopePlan& plan);

}  // namespace pe::check
