// A grid's ladders read back one axis at a time (issue 49). Each block of a grid (w, h, a video's t) reads
// its own coordinates, so a wrong interpolation_scale, temporal_interpolation_scale or base_size on one axis
// (CogVideoX's temporal one; a non-square grid where base_size divides each side by its own size) scales
// that block's ladder alone: its log_scale is ln(scale · the axis's coordinate step ratio). Each axis is
// read on its own and said in a note: the pairs read, the base and shift its slope gives, the coordinate
// step it shows against the given one, or "undetermined" where its ladder does not read. An axis whose step
// differs becomes a candidate model (that axis's coordinates rebuilt at the value read back), so the fit's
// residual, not the reading, decides whether it is named.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "explain/table_fit.h"

namespace pe::check {

// `given`: a grid's rows (grid_rows) as `spec` gives them; appends to `out` and `notes`. Nothing for one
// axis.
void axis_ladder_candidates(std::span<const double> table, const harness::SinusoidalRows& given,
                            const SinusoidalSpec& spec, std::vector<TableCandidate>& out,
                            std::vector<std::string>& notes);

}  // namespace pe::check
