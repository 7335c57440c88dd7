// rope.cache_bf16: HF's float32 cos/sin (as rope.torch_f32) stored in a bf16 cache, as engines that
// keep the table in the model's dtype do, read back as float for a float32 rotation.
//
// Contract (derived), base <= 1e7, N = |a| + |b|: the angle as rope.torch_f32, 22.2·2^-24·|φ|;
// cosf/sinf and the rotation 3.001·2^-24; the cache's rounding of |cos|, |sin| <= 1 moves the output
// by at most N·2^-8 (ct = 1, table type bf16); bf16 or float16 data round once more (c0 = 1).
// Budget: N·(c0·u_out + 2^-8 + (3.001 + 22.2·|φ|)·2^-24). Largest position: 2^24.
// Scaling (pe/rope_scaling.h): the formula runs on the plan's base' (NTK, dynamic; at most max_base)
// and multiplies each rescaled frequency by fl(g_j) in float: 2 more roundings of the angle
// (c1_gain = 2.001); cos and sin times the attention factor in float (ca = 3: A rounded to double, to the
// compute type, the product).
#include "detail/framework_sincos.h"
#include "detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F32,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 24,
    .max_base = 1e7,
    .max_input_abs = 0x1p126,
    .table_type = DType::BF16,
    .depends_on = "glibc powf, sinf, cosf <= 1 ULP",
    .c0 = 1,
    .ck = 3.001,
    .ct = 1,
    .c1 = 22.2,
    .c1_gain = 2.001,
};

PE_REGISTER_ROPE("rope.cache_bf16", kContract, detail::PairwiseRope<float, detail::CachedHfRopeSinCos<BFloat16>>);

}  // namespace
}  // namespace pe
