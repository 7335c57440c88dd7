// The positions RoPE data was rotated by, read back from the data: each pair's angle from its input and
// output, then the integer position every pair agrees with, found from the slowest pair's candidates
// (one per turn it may have made) and confirmed by every faster one, each within the angle error a
// float32 implementation makes at that position. "Undetermined" where that error cannot tell p from
// p ± 1 (the fastest pair's angle at large p in float32), or where no position or two fit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose.h"
#include "pe/plan.h"

namespace pe::cli {

struct RecoveredRow {
  std::size_t token = 0;
  std::optional<std::int64_t> position;  // nullopt: undetermined
};

// Text RoPE rows (plan with one axis), sampled tokens of head 0, searched over [0, max_position].
std::vector<RecoveredRow> recover_positions(const RopeData& d, const RopePlan& plan,
                                            const std::vector<std::size_t>& tokens,
                                            std::int64_t max_position);

// The pattern of the recovered positions against the given ones, in words ("every row rotated by p - 1000:
// an offset dropped or added"); empty when they agree or nothing could be determined.
std::string position_pattern(const RopeData& d, const std::vector<RecoveredRow>& rows);

}  // namespace pe::cli
