// Positions read back per (token, head) row that follow the row's index instead of its token's position: the
// sequence and head axes exchanged (a cos/sin cache indexed by the head, [heads, tokens] data read as
// [tokens, heads]), or one position per (token, head) row (a flattened row index).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "readback/position_recovery.h"

namespace pe::check {

// The words of the first index every determined row was rotated by: its head index h, the position of token
// h, its flattened index t·heads + h, or h·tokens + t. Claimed only where it is measured: at least two heads'
// rows determined, more than half the sampled rows determined, every determined one equal to the index, and
// the index not the given position in at least one of them (where they coincide the data says nothing).
// nullopt otherwise.
std::optional<std::string> row_index_pattern(const RopeData& d, const std::vector<RecoveredRow>& rows);

}  // namespace pe::check
