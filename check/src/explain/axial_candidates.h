// Axial RoPE's own mistakes (issue 50), as conventions for diagnose_rope to try beside the generic ones
// (which already permute the position axes each block reads): the axes' dims in another order (the blocks
// moved while each still reads its own positions), one axis's ladder over twice or half its dim (HF's
// "θ over head_dim where head_dim/2" on that axis alone), and θ at the other diffusion models' value
// (HunyuanVideo's 256, Flux's and Wan's 10000).
#pragma once

#include <vector>

#include "explain/convention_fit.h"

namespace pe::check {

// Nothing unless `given` is axial; `pairs` is rotary_dim/2.
void axial_candidates(const Convention& given, std::size_t pairs, std::vector<Convention>& out);

}  // namespace pe::check
