// rope.math_bf16: float32 cos/sin tables (HF's formula, as rope.torch_f32) and the rotation's arithmetic
// in bfloat16: each product of a bfloat16 input by a float32 table value and the sum rounded to bfloat16
// (a kernel that rounds every operation to the data's type while keeping its tables in float32).
//
// Contract (derived in rotation16_contract.h, docs/contracts.md §2k): |y - exact| <=
// A·N·(2.005·2^-8 + 22.2·2^-24·|φ|) + 2·denorm_min + denorm_min of the data's type, N = |a| + |b|,
// base <= 1e7, positions <= 2^24 (float32 angles).
#include "detail/framework_sincos.h"
#include "detail/rotation16.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"
#include "rope/framework/rotation16_contract.h"

namespace pe {
namespace {

const Contract kContract = detail::rotation16_contract(DType::BF16, false, "glibc powf, sinf, cosf <= 1 ULP");

PE_REGISTER_ROPE("rope.math_bf16", kContract,
                 detail::PairwiseRope<float, detail::HfRopeSinCos, detail::Rotation16<BFloat16>::Backend>);

}  // namespace
}  // namespace pe
