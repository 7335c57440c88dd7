// How far an engine's RoPE output may lie from the exact rotation, element by element, where a check needs
// the rotation's error inside a larger computation (FP8 codes, attention scores): HF's rotate_half in
// `rotation` (float32, or a 16-bit type with its cos/sin cache), the rope.torch_f32/_bf16/_f16 contract's
// element budget at the pair's angle, which carries the angle's, the frequency's and the scaling's errors.
#pragma once

#include <span>
#include <vector>

#include "pe/batch.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe::check {

// Per element of x's layout (`batch`, positions by each pair's axis): the allowance of its rotated output
// channel, A·slope(|φ|, j)·(|x_a| + |x_b|) + floor; 0 on pass-through channels (copied exactly). `rotation`
// F64 reads as F32 (no engine rotates in double for these kernels).
std::vector<double> rotation_allowance(const RopePlan& plan, const RopeBatch& batch,
                                       std::span<const double> x, DType rotation);

}  // namespace pe::check
