// rope.scalar_f32: float32 throughout, as a plain C++ loop over HF's inv_freq in float would do:
// θ_j rounded to float, the angle fl(fl(p)·θ_j), sinf/cosf, and the rotation in float.
//
// Contract (derived; shared steps in docs/contracts.md), per output of a pair (a, b), N = |a| + |b|:
//   float32 angle 3.001·2^-24·|φ|, moving the output by N times it (§2a); sinf/cosf 1 ULP and the
//   rotation fl(fl(a·c) - fl(b·s)), 3.001·2^-24·N with the second-order terms (§2c, §2d); bfloat16/
//   float16 data round once (c0 = 1, §2e). Budget: N·(c0·u_out + (3.001 + 3.001·|φ|)·2^-24) + the
//   underflow floor 2·denorm_min(f32) + denorm_min(out) (§2e). |input| <= 2^126 so that |a| + |b|
//   cannot overflow. Largest position promised: 2^24. Scaling: the plan's θ'_j (rounded to
//   float as before); cos and sin times the attention factor in float (ca = 3: A rounded to double, to the
//   compute type, the product).
#include "pe/detail/pairwise_variant.h"
#include "detail/scalar_sincos.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F32,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 24,
    .max_input_abs = 0x1p126,
    .depends_on = "glibc sinf/cosf <= 1 ULP",
    .c0 = 1,
    .ck = 3.001,
    .c1 = 3.001,
};

PE_REGISTER_ROPE("rope.scalar_f32", kContract,
                 detail::PairwiseRope<float, detail::LibmSinCos<float, RopePlan>>);

}  // namespace
}  // namespace pe
