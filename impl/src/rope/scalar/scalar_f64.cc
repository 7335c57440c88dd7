// rope.scalar_f64: double throughout (θ_j, angle, sin/cos, rotation), rounded once into the data type.
//
// Contract (derived; shared steps in docs/contracts.md), per output of a pair (a, b), N = |a| + |b|:
//   double angle 2.03·2^-53·|φ| (§2a); sin/cos 1 ULP and the rotation's roundings in double,
//   3.001·2^-53·N (§2c, §2d); one rounding into float32/bfloat16/float16 data (c0 = 1, §2e).
//   Budget: N·(c0·u_out + (3.001 + 2.03·|φ|)·2^-53) + underflow floor. |input| <= 2^126.
//   Largest position promised: 2^31. Scaling: the plan's θ'_j; cos and sin times the attention
//   factor in the compute type (ca = 3: A rounded to double, to the compute type, the product).
#include "pe/detail/pairwise_variant.h"
#include "detail/scalar_sincos.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::F64, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F64,
    .max_position = std::int64_t{1} << 31,
    .max_input_abs = 0x1p126,
    .depends_on = "glibc sin/cos <= 1 ULP; x86-64 long double (64-bit significand) for the plan frequencies",
    .c0 = 1,
    .ck = 3.001,
    .c1 = 2.03,
};

PE_REGISTER_ROPE("rope.scalar_f64", kContract,
                 detail::PairwiseRope<double, detail::LibmSinCos<double, RopePlan>>);

}  // namespace
}  // namespace pe
